# GLib's main loop (GMainContext) and GIO's D-Bus (GDBus): how their threads hand work to
# one another, which the kernel shows only as a write of 8 bytes to an eventfd and the
# wake-up of a thread in poll.
#
# A GMainContext is polled by the thread that owns it (g_main_loop_run, or the private
# loop of a synchronous call such as g_dbus_connection_call_sync). Other threads hand it
# work by attaching a source to it: g_idle_add, g_timeout_add, g_main_context_invoke,
# GTask returning from its thread pool, GDBus handing a method call to the thread that
# registered the object or a reply to the thread that waits for it. g_source_attach adds
# the source to the context's list (memory, under the context's mutex) and, when another
# thread owns the context, signals its GWakeup: g_wakeup_signal writes the 64-bit value 1
# to the context's eventfd, which is in every poll of that context. The owner's poll
# returns, g_main_context_check reads the eventfd (g_wakeup_acknowledge) and dispatch runs
# the source. The write is the hand-off; nothing else about it reaches the kernel.
#
# GDBus does all the socket I/O of a connection on one private thread named "gdbus" (its
# GDBusWorker, running its own GMainContext): it reads each message (the 16-byte header,
# then the body, with a zero-timeout poll between), and hands method calls, signals and
# replies to the contexts that wait for them in that way; a reply or call sent from any
# thread is handed back to it the same way, or queued in memory when it is already
# writing. Verified on GLib 2.74 (Debian 12), gmain.c and gdbusconnection.c.

pack glib.gio {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "GLib main-context wake-ups: a source attached from another thread is a hand-off"
  applies library("libglib-2.0.so*"), library("libgio-2.0.so*"), symbol("g_main_loop_run"),
    symbol("g_main_context_iteration")
}

# The context's owner sleeps in poll (g_poll); GLib has no other wait for its loop.
list context_polls = ["poll", "ppoll"]

# A thread that writes 8 bytes (g_wakeup_signal's eventfd counter) and so wakes another
# thread of its process asleep in poll has attached a source to that thread's context, or
# quit its loop: it handed it work, and the woken thread runs it. The kernel's wake-up is a
# plain, weak one (linux.kernel/wakeup.default); this makes it the hand-off it is, from the
# thread that wrote. The eventfd's counter, when the recorder pairs its write with the
# owner's read, gives the same edge as a message (linux.kernel/message): this one stands
# when it does not, as when the owner reads several hand-offs at once after the bytes of an
# eventfd freed with units unread were counted against a new one at the same address (every
# synchronous GDBus call makes and frees a context of its own). The source attached is work
# for the owner to run (a method call to dispatch, a message to write): the hand-off
# carries a request as the eventfd's bytes would (`request`), so a report shows who asked a
# relay such as the gdbus thread for the work it passed on. GLib's writes to a context the
# writer owns itself (a poll set changed while it dispatches) wake nobody: no edge.
# Interrupt context is excluded as everywhere: it acts for whoever armed it.
edge context.handoff {
  link wakeup
  where from.syscall.name == "write" and from.syscall.count == 8
    and from.pid == to.pid and from.tid != to.tid
    and to.syscall.name in context_polls
    and not from.irq and not from.softirq and from.interrupt != 1
  strength strong
  kind glib_wakeup
  priority 15
  request
}

