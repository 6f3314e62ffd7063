// The names and call stacks of the session's events, interned once per session.
#include "bench/session_model_internal.h"

namespace cw::bench {

SessionModel::Names::Names(EventBuilder& ev)
#define N(x) x(ev.str(#x))
    : N(epoll_wait),
      N(poll),
      N(futex),
      N(clock_nanosleep),
      N(nanosleep),
      N(recvmsg),
      N(sendmsg),
      N(read),
      N(write),
      N(pread64),
      N(openat),
      N(close),
      N(mmap),
      N(timerfd_settime),
      N(clone),
      N(clone3),
      N(execve),
      N(exit_group),
      N(exit),
      N(wait4),
      N(set_robust_list),
      N(prctl),
      N(ioctl),
      N(fstat),
      N(wait),
      N(wait_bitset),
      N(wake),
#undef N
      local_timer(ev.str("local_timer")),
      nvme(ev.str("nvme0q3")),
      i915(ev.str("i915")),
      eth(ev.str("enp0s31f6")),
      xhci(ev.str("xhci_hcd")),
      i8042(ev.str("i8042")),
      net_rx(ev.str("NET_RX")),
      block(ev.str("BLOCK")),
      keyboard(ev.str("AT Translated Set 2 keyboard")),
      run_task(ev.str("base::TaskAnnotator::RunTaskImpl")),
      sync_message(ev.str("content::RenderFrameHostImpl::OnSyncMessage")),
      text_bounds(ev.str("content::RenderWidgetHostImpl::GetTextInputBounds")),
      g_main_dispatch(ev.str("g_main_dispatch")),
      dbus_iterate(ev.str("_dbus_loop_iterate")),
      clutter_event(ev.str("clutter_stage_process_event")),
      ibus_process_key(ev.str("ibus_engine_process_key_event")),
      queue_pool(ev.str("ThreadPool")),
      queue_io(ev.str("IOThread")),
      queue_main(ev.str("UIThread")) {
}

SessionModel::Stacks::Stacks(EventBuilder& ev)
    : chrome_main_loop(ev.stack({"_start", "__libc_start_main", "main", "ChromeMain",
                                 "content::ContentMainRunnerImpl::Run", "base::RunLoop::Run",
                                 "base::MessagePumpEpoll::Run", "epoll_wait"})),
      chrome_thread_loop(
          ev.stack({"clone3", "start_thread", "base::Thread::ThreadMain", "base::RunLoop::Run",
                    "base::MessagePumpEpoll::Run", "epoll_wait"})),
      glib_main_loop(ev.stack({"_start", "__libc_start_main", "main", "g_main_loop_run",
                               "g_main_context_iterate", "g_main_context_poll", "poll"})),
      glib_thread_loop(ev.stack({"clone3", "start_thread", "g_thread_proxy", "g_main_loop_run",
                                 "g_main_context_iterate", "g_main_context_poll", "poll"})),
      bus_loop(ev.stack({"_start", "__libc_start_main", "main", "_dbus_loop_run",
                         "_dbus_loop_iterate", "_dbus_poll", "epoll_wait"})),
      chrome_pool_wait(
          ev.stack({"clone3", "start_thread", "base::internal::WorkerThread::RunWorker",
                    "base::WaitableEvent::TimedWait", "pthread_cond_timedwait"})),
      glib_pool_wait(
          ev.stack({"clone3", "start_thread", "g_thread_proxy", "g_thread_pool_thread_proxy",
                    "g_async_queue_timeout_pop", "pthread_cond_timedwait"})),
      chrome_pool_signal(ev.stack({"base::TaskAnnotator::RunTaskImpl",
                                   "base::internal::ThreadGroupImpl::WakeUpOneWorker",
                                   "base::WaitableEvent::Signal", "pthread_cond_signal"})),
      glib_pool_signal(ev.stack(
          {"g_main_dispatch", "g_thread_pool_push", "g_async_queue_push", "pthread_cond_signal"})),
      mutex_lock(
          ev.stack({"clone3", "start_thread", "base::internal::WorkerThread::RunWorker",
                    "base::TaskAnnotator::RunTaskImpl", "disk_cache::SimpleBackendImpl::Index",
                    "base::Lock::Acquire", "pthread_mutex_lock", "__pthread_mutex_lock_full"})),
      mutex_unlock(ev.stack({"clone3", "start_thread", "base::internal::WorkerThread::RunWorker",
                             "base::TaskAnnotator::RunTaskImpl",
                             "disk_cache::SimpleBackendImpl::Index", "base::Lock::Release",
                             "pthread_mutex_unlock", "__pthread_mutex_unlock_usercnt"})),
      sync_wait(ev.stack({"_start", "__libc_start_main", "main", "content::RendererMain",
                          "blink::LocalFrame::GetTextInputBounds", "mojo::SyncHandleRegistry::Wait",
                          "base::WaitableEvent::TimedWait", "pthread_cond_timedwait"})),
      sync_signal(
          ev.stack({"clone3", "start_thread", "base::Thread::ThreadMain",
                    "mojo::core::ports::Node::AcceptEvent", "mojo::SyncHandleRegistry::Signal",
                    "base::WaitableEvent::Signal", "pthread_cond_signal"})),
      browser_timed_wait(ev.stack({"_start", "__libc_start_main", "main", "ChromeMain",
                                   "content::RenderWidgetHostImpl::GetTextInputBounds",
                                   "base::WaitableEvent::TimedWait", "pthread_cond_timedwait"})),
      sleeper(
          ev.stack({"clone3", "start_thread", "base::PlatformThread::Sleep", "clock_nanosleep"})),
      bus_client_wait(ev.stack({"g_main_dispatch", "g_dbus_connection_call_sync",
                                "g_dbus_connection_send_message_with_reply_sync", "g_main_loop_run",
                                "g_main_context_iterate", "poll"})),
      disk_read(ev.stack({"clone3", "start_thread", "g_thread_proxy", "g_file_load_contents",
                          "g_input_stream_read", "pread64"})),
      shell_wait(ev.stack({"_start", "__libc_start_main", "main", "reader_loop", "execute_command",
                           "waitchld", "wait4"})),
      reader(ev.stack({"clone3", "start_thread", "recvmsg"})),
      chrome_post(
          ev.stack({"clone3", "start_thread", "base::Thread::ThreadMain", "base::RunLoop::Run",
                    "base::TaskAnnotator::RunTaskImpl", "base::internal::TaskRunnerImpl::PostTask",
                    "base::MessagePumpEpoll::ScheduleWork", "write"})),
      chrome_send(
          ev.stack({"clone3", "start_thread", "base::Thread::ThreadMain", "base::RunLoop::Run",
                    "base::MessagePumpEpoll::Run", "mojo::core::Channel::Write", "sendmsg"})),
      glib_send(ev.stack({"g_main_context_iterate", "g_main_dispatch",
                          "g_dbus_connection_send_message", "g_socket_send_message", "sendmsg"})),
      bus_send(ev.stack({"_dbus_loop_iterate", "_dbus_connection_do_iteration_unlocked",
                         "_dbus_transport_do_iteration", "sendmsg"})) {}

}  // namespace cw::bench
