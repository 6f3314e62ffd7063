#include "recorder/event_fields.h"

#include <fmt/format.h>

#include <stdexcept>

namespace cw {

EventKind::EventKind(const Schema& schema, std::string_view name)
    : id(schema.find(name)), schema_(&schema) {
  if (id == kNoKind) throw std::logic_error(fmt::format("schema has no kind {}", name));
  if (schema.kind(id).fields.size() > kMaxDecodedValues)
    throw std::logic_error(fmt::format("schema kind {} has more fields than the decoder holds ({})",
                                       name, kMaxDecodedValues));
}

FieldAt EventKind::at(std::string_view field) const {
  const int i = schema_->field_index(id, field);
  if (i < 0)
    throw std::logic_error(
        fmt::format("schema kind {} has no field {}", schema_->kind(id).name, field));
  return static_cast<FieldAt>(i);
}

EventFields::EventFields(const Schema& schema)
    : switch_out{{schema, "switch_out"}},
      switch_in(schema, "switch_in"),
      wakeup{{schema, "wakeup"}},
      wakeup_new{{schema, "wakeup_new"}},
      fork{{schema, "fork"}},
      thread_start{{schema, "thread_start"}},
      exec{{schema, "exec"}},
      exit{{schema, "exit"}},
      comm{{schema, "comm"}},
      syscall_enter{{schema, "syscall_enter"}},
      syscall_exit{{schema, "syscall_exit"}},
      send{{schema, "send"}},
      recv{{schema, "recv"}},
      ready{{schema, "ready"}},
      timer_arm{{schema, "timer_arm"}},
      timer_fire{{schema, "timer_fire"}},
      timer_cancel{{schema, "timer_cancel"}},
      irq_enter{{schema, "irq_enter"}},
      irq_exit{{schema, "irq_exit"}},
      softirq_enter{{schema, "softirq_enter"}},
      softirq_exit{{schema, "softirq_exit"}},
      signal_send{{schema, "signal_send"}},
      signal_deliver{{schema, "signal_deliver"}},
      call_enter{{schema, "call_enter"}},
      call_exit{{schema, "call_exit"}},
      flag_write{{schema, "flag_write"}},
      flag_read{{schema, "flag_read"}},
      sample{{schema, "sample"}},
      short_waits{{schema, "short_waits"}},
      marker{{schema, "marker"}},
      lock_held{{schema, "lock_held"}},
      lock_wait{{schema, "lock_wait"}} {}

}  // namespace cw
