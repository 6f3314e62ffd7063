// What a file descriptor names, read from the current task's fd table: the stream whose
// bytes are counted (a unix socket's receiving end, a pipe, an eventfd, a TCP flow), a
// timerfd, another socket, or a file by inode.
#pragma once

#define S_IFMT_BITS 00170000
#define S_IFSOCK_BITS 0140000
#define S_IFIFO_BITS 0010000
#define AF_UNIX_FAMILY 1
#define AF_INET_FAMILY 2
#define AF_INET6_FAMILY 10
#define IPPROTO_TCP_NUM 6

struct object_info {
  __u64 object;
  __u32 kind;
  __s32 peer_pid;
  __u32 tcp_seq;
};

static __always_inline struct file* fd_file(int fd) {
  if (fd < 0) return NULL;
  struct task_struct* task = bpf_get_current_task_btf();
  struct files_struct* files = task->files;
  if (!files) return NULL;
  struct fdtable* fdt = files->fdt;
  if (!fdt) return NULL;
  if ((unsigned int)fd >= fdt->max_fds) return NULL;
  struct file** table = fdt->fd;
  struct file* file = NULL;
  bpf_probe_read_kernel(&file, sizeof(file), table + fd);
  return file;
}

static __always_inline __u64 mix(__u64 hash, __u64 value) {
  hash ^= value;
  hash *= 0x100000001b3ULL;
  hash ^= hash >> 29;
  return hash;
}

// Hash of the directed 4-tuple source -> destination: a send hashes local -> remote, a
// receive remote -> local, so both ends of one direction agree.
static __always_inline __u64 tcp_flow_hash(struct sock* sk, bool is_send) {
  __u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);
  __u32 local[4] = {}, remote[4] = {};
  if (family == AF_INET6_FAMILY) {
    BPF_CORE_READ_INTO(&local, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32);
    BPF_CORE_READ_INTO(&remote, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr32);
    // A v4-mapped address hashes like the plain IPv4 address the other end may use.
    if (local[0] == 0 && local[1] == 0 && local[2] == bpf_htonl(0xffff)) {
      local[2] = 0;
      remote[2] = 0;
    }
  } else {
    local[3] = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
    remote[3] = BPF_CORE_READ(sk, __sk_common.skc_daddr);
  }
  __u64 local_port = BPF_CORE_READ(sk, __sk_common.skc_num);
  __u64 remote_port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
  __u32* src = is_send ? local : remote;
  __u32* dst = is_send ? remote : local;
  __u64 hash = 0xcbf29ce484222325ULL;
#pragma unroll
  for (int i = 0; i < 4; i++) hash = mix(hash, src[i]);
  hash = mix(hash, is_send ? local_port : remote_port);
#pragma unroll
  for (int i = 0; i < 4; i++) hash = mix(hash, dst[i]);
  hash = mix(hash, is_send ? remote_port : local_port);
  return hash;
}

static __always_inline __s32 pid_number(struct pid* pid) {
  if (!pid) return -1;
  return BPF_CORE_READ(pid, numbers[0].nr);
}

static __always_inline bool is_kind(__u64 f_op, __u64 release, __u64 fops_addr,
                                    __u64 release_addr) {
  return (fops_addr && f_op == fops_addr) || (release_addr && release == release_addr);
}

// Whether objects of `kind` are streams whose bytes are counted (sent and received).
static __always_inline bool stream_kind(__u32 kind) {
  return kind == CW_OBJ_UNIX || kind == CW_OBJ_PIPE || kind == CW_OBJ_EVENTFD || kind == CW_OBJ_TCP;
}

static __always_inline void resolve_file(struct file* file, bool is_send, struct object_info* out) {
  out->object = 0;
  out->kind = CW_OBJ_NONE;
  out->peer_pid = -1;
  out->tcp_seq = 0;
  if (!file) return;
  file = KERNEL_CAST(struct file, file);
  const struct file_operations* fops = file->f_op;
  __u64 f_op = (__u64)fops;
  __u64 release = fops ? (__u64)fops->release : 0;
  struct inode* inode = file->f_inode;
  __u32 mode = inode ? inode->i_mode : 0;
  void* private_data = file->private_data;
  if (is_kind(f_op, release, eventfd_fops, eventfd_release)) {
    out->kind = CW_OBJ_EVENTFD;
    out->object = (__u64)private_data;
    return;
  }
  if (is_kind(f_op, release, timerfd_fops, timerfd_release)) {
    out->kind = CW_OBJ_TIMERFD;
    out->object = (__u64)private_data;
    return;
  }
  if (is_kind(f_op, release, socket_fops, sock_release) || (mode & S_IFMT_BITS) == S_IFSOCK_BITS) {
    struct sock* sk = KERNEL_CAST(struct socket, private_data)->sk;
    if (!sk) {
      out->kind = CW_OBJ_OTHER_SOCK;
      return;
    }
    __u16 family = sk->__sk_common.skc_family;
    __u16 protocol = sk->sk_protocol;
    if (family == AF_UNIX_FAMILY) {
      struct sock* receiver = is_send ? KERNEL_CAST(struct unix_sock, sk)->peer : sk;
      out->kind = CW_OBJ_UNIX;
      out->object = (__u64)receiver;
      out->peer_pid = pid_number(sk->sk_peer_pid);
      return;
    }
    if ((family == AF_INET_FAMILY || family == AF_INET6_FAMILY) && protocol == IPPROTO_TCP_NUM) {
      struct tcp_sock* tp = (struct tcp_sock*)sk;
      out->kind = CW_OBJ_TCP;
      out->object = tcp_flow_hash(sk, is_send);
      out->tcp_seq = is_send ? BPF_CORE_READ(tp, write_seq) : BPF_CORE_READ(tp, copied_seq);
      return;
    }
    out->kind = CW_OBJ_OTHER_SOCK;
    out->object = (__u64)sk;
    return;
  }
  if (is_kind(f_op, release, pipefifo_fops, pipe_release) || (mode & S_IFMT_BITS) == S_IFIFO_BITS) {
    out->kind = CW_OBJ_PIPE;
    out->object = (__u64)private_data;
    return;
  }
  out->kind = CW_OBJ_FILE;
  out->object = inode ? inode->i_ino : 0;
}
