// Instrumentation packs ask for (instrument/ finds the offsets): function boundaries and
// flag-access instructions by uprobes, flags by hardware watchpoints. Uprobes are attached
// per file with pid -1, so they fire in every process that maps the file; the pid filter
// decides here, as for the tracepoints.
#pragma once

static __always_inline int record_call(struct pt_regs* ctx, __u32 is_exit) {
  if (!current_traced()) return 0;
  struct cw_rec_call* rec = reserve(sizeof(*rec));
  if (!rec) return 0;
  fill_header(&rec->h, CW_REC_CALL, sizeof(*rec));
  rec->fn_index = (__u32)bpf_get_attach_cookie(ctx);
  rec->is_exit = is_exit;
  // At a uretprobe the ip is the caller's return address, not the function's.
  rec->address = is_exit ? 0 : PT_REGS_IP(ctx);
  submit(rec);
  return 0;
}

SEC("uprobe")
int on_function_entry(struct pt_regs* ctx) {
  keep_cpu();
  int result = record_call(ctx, 0);
  let_cpu();
  return result;
}

SEC("uretprobe")
int on_function_exit(struct pt_regs* ctx) {
  keep_cpu();
  int result = record_call(ctx, 1);
  let_cpu();
  return result;
}

// What a thread's last flag store will have written once it has run (see cw_site_kind).
struct flag_arm {
  __u64 ts;  // just before the store: the write's time (see emit_probed_access)
  __u64 addr;
  __u64 site_ip;
  __u64 next_ip;
  __u32 flag_index;
  __u32 size;
  __u32 access;  // CW_FLAG_WRITE or CW_FLAG_READ
  __u32 pad;
};

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);  // an arm whose thread died is evicted, not leaked
  __uint(max_entries, 16384);
  __type(key, __u32);  // tid
  __type(value, struct flag_arm);
} flag_arms SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, struct cw_watch_key);
  __type(value, struct cw_watch_info);
} watched SEC(".maps");

// The flag's value, zero-extended; false when the memory cannot be read. One constant
// size per case: the verifier loses the bounds of a computed size.
static __always_inline bool read_flag(__u64 addr, __u32 size, __u64* value) {
  *value = 0;  // little-endian: the low bytes are read into
  switch (size) {
    case 1: return bpf_probe_read_user(value, 1, (void*)addr) == 0;
    case 2: return bpf_probe_read_user(value, 2, (void*)addr) == 0;
    case 4: return bpf_probe_read_user(value, 4, (void*)addr) == 0;
    case 8: return bpf_probe_read_user(value, 8, (void*)addr) == 0;
    default: return false;
  }
}

static __always_inline struct cw_rec_flag* start_flag_record(__u32 flag_index, __u8 access,
                                                             __u8 source, __u32 size) {
  struct cw_rec_flag* rec = reserve(sizeof(*rec));
  if (!rec) return NULL;
  fill_header(&rec->h, CW_REC_FLAG, sizeof(*rec));
  rec->flag_index = flag_index;
  rec->access = access;
  rec->source = source;
  rec->size = size;
  rec->insn_len = 0;
  __builtin_memset(rec->insn, 0, sizeof(rec->insn));
  return rec;
}

// `ts`: 0 for now; a write passes the time its store was armed. The value is read after
// the store, a trap later, and a thread on another CPU may have read it in between: stamped
// with the arm's time, the write still comes before every read that saw it.
static __always_inline void emit_probed_access(__u32 flag_index, __u8 access, __u32 size,
                                               __u64 addr, __u64 ip, __u64 ts) {
  __u64 value;
  if (!read_flag(addr, size, &value)) return;
  struct cw_rec_flag* rec = start_flag_record(flag_index, access, CW_FLAG_PROBE, size);
  if (!rec) return;
  if (ts) rec->h.ts = ts;
  rec->addr = addr;
  rec->value = value;
  rec->ip = ip;
  submit(rec);
}

static __always_inline int flag_site(struct pt_regs* ctx) {
  __u64 cookie = bpf_get_attach_cookie(ctx);
  __u64 ip = PT_REGS_IP(ctx);
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  __u32 kind = cw_site_kind(cookie);

  if (kind == CW_SITE_WRITE_AFTER) {
    struct flag_arm* arm = bpf_map_lookup_elem(&flag_arms, &tid);
    if (!arm || arm->next_ip != ip) return 0;  // reached by a jump, not after the store
    emit_probed_access(arm->flag_index, arm->access, arm->size, arm->addr, arm->site_ip,
                       arm->access == CW_FLAG_WRITE ? arm->ts : 0);
    bpf_map_delete_elem(&flag_arms, &tid);
    return 0;
  }

  __u64 addr = ip + cw_site_delta(cookie);
  if (cw_site_via_got(cookie) && bpf_probe_read_user(&addr, sizeof(addr), (void*)addr) != 0)
    return 0;
  if (kind == CW_SITE_READ) {
    emit_probed_access(cw_site_flag(cookie), CW_FLAG_READ, cw_site_size(cookie), addr, ip, 0);
    return 0;
  }
  if (kind != CW_SITE_WRITE_ARM && kind != CW_SITE_READ_ARM) return 0;
  // A store right after another flag store is also the first one's WRITE_AFTER site, and
  // the two uprobes run in either order: finish the pending write before arming anew.
  struct flag_arm* pending = bpf_map_lookup_elem(&flag_arms, &tid);
  if (pending && pending->next_ip == ip)
    emit_probed_access(pending->flag_index, pending->access, pending->size, pending->addr,
                       pending->site_ip, pending->access == CW_FLAG_WRITE ? pending->ts : 0);
  struct flag_arm arm = {
      .ts = bpf_ktime_get_ns(),
      .addr = addr,
      .site_ip = ip,
      .next_ip = ip + cw_site_length(cookie),
      .flag_index = cw_site_flag(cookie),
      .size = cw_site_size(cookie),
      .access = kind == CW_SITE_WRITE_ARM ? CW_FLAG_WRITE : CW_FLAG_READ,
      .pad = 0,
  };
  bpf_map_update_elem(&flag_arms, &tid, &arm, BPF_ANY);
  return 0;
}

SEC("uprobe")
int on_flag_site(struct pt_regs* ctx) {
  if (!current_traced()) return 0;
  keep_cpu();
  int result = flag_site(ctx);
  let_cpu();
  return result;
}

// A hardware watchpoint's trap: it comes after the accessing instruction, with the
// thread's user registers (ip = the next instruction) and the watched address.
SEC("perf_event")
int on_watch_hit(struct bpf_perf_event_data* ctx) {
  if (!current_traced()) return 0;
  struct cw_watch_key key = {.tgid = bpf_get_current_pid_tgid() >> 32, .pad = 0, .addr = ctx->addr};
  struct cw_watch_info* watch = bpf_map_lookup_elem(&watched, &key);
  if (!watch) return 0;  // an inherited copy in a forked (maybe exec'd) process
  __u64 value;
  if (!read_flag(ctx->addr, watch->size, &value)) return 0;
  struct cw_rec_flag* rec =
      start_flag_record(watch->flag_index, watch->writes_only ? CW_FLAG_WRITE : CW_FLAG_UNKNOWN,
                        CW_FLAG_WATCH, watch->size);
  if (!rec) return 0;
  __u64 ip = PT_REGS_IP(&ctx->regs);
  rec->addr = ctx->addr;
  rec->value = value;
  rec->ip = ip;
  // The instruction that trapped ends at ip; x86 instructions are at most 15 bytes. Near
  // the start of a mapping only the bytes on ip's own page can be read.
  if (bpf_probe_read_user(rec->insn, CW_INSN_BEFORE, (void*)(ip - CW_INSN_BEFORE)) == 0) {
    rec->insn_len = CW_INSN_BEFORE;
  } else {
    __u32 on_page = ip & 0xfff;
    if (on_page > 0 && on_page < CW_INSN_BEFORE &&
        bpf_probe_read_user(rec->insn, on_page, (void*)(ip - on_page)) == 0)
      rec->insn_len = on_page;
    else
      __builtin_memset(rec->insn, 0, sizeof(rec->insn));
  }
  submit(rec);
  return 0;
}
