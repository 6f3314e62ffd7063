// The current thread's ids and a task's saved user registers, read from the task itself.
// Where returns are mitigated (SRSO's safe RET on AMD, retpolines), every helper call pays
// for its return: 20 to 40 ns a call on the machine of bench/RESULTS.md, as much as the rest
// of what most runs of a scheduler program do. The JIT inlines the current task, and a field
// of a task is a plain load.
#pragma once

// Reads through typed kernel pointers are plain loads the verifier guards; a helper call
// per field (BPF_CORE_READ) cost most of a syscall's recording time.
extern void* bpf_rdonly_cast(void* obj, __u32 btf_id) __ksym;
#define KERNEL_CAST(type, ptr) ((type*)bpf_rdonly_cast((void*)(ptr), bpf_core_type_id_kernel(type)))

extern bool CONFIG_X86_FRED __kconfig __weak;

// What bpf_get_current_pid_tgid() gives: the process id above, the thread id below.
static __always_inline __u64 current_ids(void) {
  struct task_struct* task = bpf_get_current_task_btf();
  return (__u64)task->tgid << 32 | (__u32)task->pid;
}

// Whether the place computed below is where bpf_task_pt_regs finds a task's registers: 0
// not checked yet, 1 it is, 2 it is not (then the helper is used from then on).
__u32 user_regs_layout = 0;

// Where `task`'s user registers are saved: the top of its kernel stack (THREAD_SIZE: 16 KiB,
// 32 KiB with KASAN), less the padding the kernel leaves above them (16 bytes with FRED),
// less their size. Checked against the helper the first time.
static __always_inline const struct pt_regs* user_regs_of(struct task_struct* task) {
  const __u64 thread_size = CONFIG_KASAN ? 32768 : 16384;
  const __u64 padding = CONFIG_X86_FRED ? 16 : 0;
  const __u64 place =
      (__u64)task->stack + thread_size - padding - bpf_core_type_size(struct pt_regs);
  const __u32 layout = user_regs_layout;
  if (layout == 1) return KERNEL_CAST(const struct pt_regs, place);
  const struct pt_regs* regs = (const struct pt_regs*)bpf_task_pt_regs(task);
  if (layout == 0) user_regs_layout = (__u64)regs == place ? 1 : 2;
  return regs;
}
