// Where the record decoder (recorder/record_decoder.h) puts what it decodes: each event
// kind it writes, and the position in that kind's values of each field it sets.
//
// Both are found by name in the trace's schema (trace/schema.cc) once, when the decoder is
// made, so decoding a record stores at known positions without looking anything up, and
// a field the schema moves or adds shifts no other. A kind or field the schema lacks is
// an error then, not values put in the wrong field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trace/schema.h"

namespace cw {

// The most values an event held by the decoder carries (syscall_enter's seven).
inline constexpr size_t kMaxDecodedValues = 7;

// A field's position in its kind's values.
using FieldAt = uint8_t;

// A kind the decoder writes. Each kind below declares the fields it sets as
// `FieldAt name = at("name")`, so a member is always the field of its name; it is made
// from the schema and the kind's name, as {{schema, "name"}}.
class EventKind {
 public:
  // Throws std::logic_error when the schema has no kind `name`, or one with more values
  // than the decoder holds.
  EventKind(const Schema& schema, std::string_view name);
  KindId id;

 protected:
  FieldAt at(std::string_view field) const;  // throws std::logic_error when absent

 private:
  const Schema* schema_;  // only while the fields are found
};

struct EventFields {
  explicit EventFields(const Schema& schema);

  struct : EventKind {
    FieldAt state = at("state");
  } switch_out;
  EventKind switch_in;
  struct : EventKind {
    FieldAt target = at("target"), interrupt = at("interrupt"), cause = at("cause"),
            delivers = at("delivers");
  } wakeup;
  struct : EventKind {
    FieldAt target = at("target");
  } wakeup_new;

  struct : EventKind {
    FieldAt child = at("child"), child_pid = at("child_pid"), thread = at("thread");
  } fork;
  struct : EventKind {
    FieldAt parent = at("parent");
  } thread_start;
  struct : EventKind {
    FieldAt path = at("path");
  } exec;
  struct : EventKind {
    FieldAt code = at("code");
  } exit;
  struct : EventKind {
    FieldAt name = at("name");
  } comm;

  struct : EventKind {
    FieldAt name = at("name"), fd = at("fd"), resource = at("resource"), op = at("op"),
            value = at("value"), count = at("count"), timeout_ns = at("timeout_ns");
  } syscall_enter;
  struct : EventKind {
    FieldAt name = at("name"), ret = at("ret");
  } syscall_exit;

  struct Transfer : EventKind {
    FieldAt object = at("object"), offset = at("offset"), len = at("len"), peer = at("peer"),
            fd = at("fd"), queued = at("queued");
  } send, recv;
  struct : EventKind {
    FieldAt fd = at("fd"), events = at("events");
  } ready;

  struct : EventKind {
    FieldAt timer = at("timer"), expires_ns = at("expires_ns"), interval_ns = at("interval_ns");
  } timer_arm;
  struct Timer : EventKind {
    FieldAt timer = at("timer");
  } timer_fire, timer_cancel;

  struct : EventKind {
    FieldAt irq = at("irq"), name = at("name");
  } irq_enter;
  struct : EventKind {
    FieldAt irq = at("irq");
  } irq_exit;
  struct : EventKind {
    FieldAt vec = at("vec"), name = at("name");
  } softirq_enter;
  struct : EventKind {
    FieldAt vec = at("vec");
  } softirq_exit;

  struct : EventKind {
    FieldAt target = at("target"), sig = at("sig"), cause = at("cause");
  } signal_send;
  struct : EventKind {
    FieldAt sig = at("sig");
  } signal_deliver;

  struct : EventKind {
    FieldAt fn = at("fn"), addr = at("addr");
  } call_enter;
  struct : EventKind {
    FieldAt fn = at("fn");
  } call_exit;
  struct Flag : EventKind {
    FieldAt flag = at("flag"), addr = at("addr"), value = at("value");
  } flag_write, flag_read;

  struct : EventKind {
    FieldAt event = at("event"), period = at("period");
  } sample;
  struct : EventKind {
    FieldAt since = at("since"), count = at("count"), total_ns = at("total_ns"),
            uninterruptible_ns = at("uninterruptible_ns"), waker = at("waker"),
            preempted = at("preempted"), runnable_ns = at("runnable_ns");
  } short_waits;
  struct : EventKind {
    FieldAt text = at("text");
  } marker;
  struct : EventKind {
    FieldAt object = at("object"), waiter = at("waiter"), lock = at("lock");
  } lock_held;
  struct : EventKind {
    FieldAt object = at("object"), holder = at("holder");
  } lock_wait;
};

}  // namespace cw
