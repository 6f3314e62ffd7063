# CPython's asyncio, and the interpreter under it: what the kernel sees of an asyncio
# program, and how to read it.
#
# An asyncio program runs its coroutines on one thread, the event loop's (asyncio's
# `_run_once`: one epoll_wait through the selectors module, then the callbacks that are
# ready). linux.kernel's loop.wait and loop.request already cut that thread per turn and
# per client read. Work that must not block the loop goes to other threads:
# loop.run_in_executor and asyncio.to_thread hand a call to a concurrent.futures thread
# pool (its workers take calls from a queue in memory), and the subprocess support's
# child watcher waits for each child in a thread of its own. Every such thread gives its
# result back the same way: loop.call_soon_threadsafe appends the callback to the loop's
# ready queue and writes one byte to the loop's self-pipe, a socketpair inside the process
# (BaseSelectorEventLoop._write_to_self, a send() of b"\0"), so that the loop's epoll_wait
# returns; the loop reads the byte (_read_from_self) as one of the callbacks of that turn.
# (loop.add_signal_handler points signal.set_wakeup_fd at the same socket too, but
# CPython's C signal handler writes it with write(), from whichever thread the signal
# landed on: not the send below.)
#
# The hand-offs between coroutines (an asyncio.Lock, Event, Queue, a Future's result: on
# the loop's thread) and a call that waited in the pool's queue behind a busy worker (the
# worker takes it when it comes back) happen in memory and make no system call at all: no
# rule can see them (docs/packs/python.asyncio.md says what the engine would need).
#
# Python threads also hand each other the interpreter lock (the GIL) every few
# milliseconds when more than one of them runs Python code, and around each blocking
# system call; those hand-offs are futex wake-ups too (gil.handoff below).

pack python.asyncio {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "CPython asyncio: the self-pipe of call_soon_threadsafe, and the GIL's hand-offs"
  applies library("python3.*"), library("libpython3.*"), program("python3*")
}

# The waits of asyncio's selector (selectors.DefaultSelector: epoll on Linux; poll and
# select where a program chose them).
list selector_waits = ["epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6"]

# ---- call_soon_threadsafe: the loop's self-pipe ------------------------------------------

# A thread of the program's own process sends a byte on a socket that wakes the event
# loop's thread in its selector wait: that is call_soon_threadsafe writing the loop's
# self-pipe, the completion of a run_in_executor / to_thread call (or a child watcher's
# report that a subprocess ended). The callback it queued is what the loop runs next: the
# wake-up is the cause of the loop's turn.
#
# linux.kernel cannot tell: the byte's message edge lands on the loop's read of the
# self-pipe, which linux.kernel's loop.request makes an item of its own, after the turn's
# other callbacks; the wake-up that ended the loop's wait is a plain wake-up from inside a
# unix-socket send (no loopback softirq marks it as the sender's, as for TCP), so it is
# weak, and a diagnosis that reaches the loop's wait asks whether the worker woke it.
# The rule asks for a send (asyncio's `_write_to_self` is `sock.send`), between two
# threads of one process, waking a wait of the selector; an interrupt's wake-up during
# the send is not the send's.
edge threadsafe.wake {
  link wakeup
  where from.pid == to.pid and from.tid != to.tid
    and from.syscall.name == "sendto" and to.syscall.name in selector_waits
    and not from.irq and not from.softirq and from.interrupt != 1
  strength strong
  kind threadsafe
  priority 15
}

# ---- the GIL -----------------------------------------------------------------------------

# CPython's interpreter lock is a mutex and two condition variables in the interpreter's
# static data (take_gil and drop_gil in Python/ceval_gil.h): a thread that comes back from
# a blocking call (PyEval_RestoreThread), starts (PyEval_AcquireThread), or was asked to
# let another thread run after its 5 ms switch interval (the eval loop,
# _PyEval_EvalFrameDefault) waits on them, and the thread that drops the lock wakes it.
# linux.kernel makes such a wake-up a strong futex edge (same futex word on both sides);
# this rule names it `gil`, so that a report says the interpreter lock was handed over.
#
# take_gil and drop_gil are static: Debian's python3 has no symbol for them, and their
# frame is a bare address between libc's pthread_cond_*/pthread_mutex_lock and the
# exported function that called them. The waiter's stack tells it only when the recording
# walked it through those frames (`causeway record --call-graph dwarf`); with frame
# pointers (the default) a Debian python3's stack ends in libc, and the wake-up stays
# linux.kernel's futex edge. A build with symbols names take_gil and drop_gil themselves.
#
# The hand-off is mutual exclusion, as glibc.pthread's mutex.unlock, and would be weak by
# that measure. It stays strong here because the diagnosis takes the thread that ended a
# wait as the next step back whatever the edge's strength: a weak gil edge is followed
# all the same and only adds a question, while a thread that holds the GIL in a long C
# call (a regular expression that backtracks, run through asyncio.to_thread) is what every
# other Python thread of the process waits for (docs/packs/python.asyncio.md).
lua [=[
  -- The functions of CPython that take or drop the GIL and are exported: the frame of the
  -- static take_gil/drop_gil sits between them and libc's wait.
  local gil_callers = {
    PyEval_RestoreThread = true, PyEval_AcquireThread = true, PyEval_AcquireLock = true,
    PyEval_SaveThread = true, PyGILState_Ensure = true, _PyEval_EvalFrameDefault = true,
  }
  -- libc's functions take_gil and drop_gil wait in.
  local gil_waits = {
    pthread_cond_timedwait = true, pthread_cond_wait = true, pthread_mutex_lock = true,
  }
  local function bare(frame)
    return frame == nil or frame == "" or string.match(frame, "^0x") ~= nil
  end
  -- Whether a stack (innermost frame first) is a wait for CPython's GIL.
  function gil_wait(stack)
    for i = 1, #stack do
      local f = stack[i]
      if f == "take_gil" or f == "drop_gil" then return true end
      if gil_waits[f] then
        -- exactly one frame without a name (take_gil or drop_gil), then its caller
        return bare(stack[i + 1]) and not bare(stack[i + 2])
          and gil_callers[stack[i + 2]] == true
      end
    end
    return false
  end
]=]

edge gil.handoff {
  link wakeup
  where from.pid == to.pid and from.tid != to.tid and to.syscall.name == "futex"
    and not from.irq and not from.softirq and from.interrupt != 1
    and lua.gil_wait(to.stack)
  strength strong
  kind gil
  priority 20
}
