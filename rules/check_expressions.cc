// Checker pass: expressions. Each clause's expression is compiled to rules/ruleset.h
// CompiledExpr nodes with its names resolved (check_resolve.cc) and its types checked, so
// the engine evaluates them without looking anything up.
#include <fmt/format.h>

#include "rules/check_context.h"

namespace cw::rules::check {

std::string_view type_name(ValueType t) {
  switch (t) {
    case ValueType::Null: return "lua value";
    case ValueType::Bool: return "bool";
    case ValueType::Int: return "int";
    case ValueType::Str: return "str";
    case ValueType::Stack: return "stack";
    case ValueType::List: return "list";
  }
  return "?";
}

ValueType value_type(FieldType t) {
  return t == FieldType::Str ? ValueType::Str : ValueType::Int;
}

namespace {
// Int and Bool compare with each other; a Lua result compares with anything.
enum class Category { Any, Number, Text, Other };
Category category(ValueType t) {
  switch (t) {
    case ValueType::Null: return Category::Any;
    case ValueType::Bool:
    case ValueType::Int: return Category::Number;
    case ValueType::Str: return Category::Text;
    default: return Category::Other;
  }
}
}  // namespace

bool comparable(ValueType a, ValueType b) {
  Category ca = category(a), cb = category(b);
  if (ca == Category::Other || cb == Category::Other) return false;
  return ca == Category::Any || cb == Category::Any || ca == cb;
}

std::optional<int64_t> const_int(const dsl::Expr& e) {
  if (e.kind == dsl::ExprKind::Int) return e.ival;
  if (e.kind == dsl::ExprKind::Unary && e.op == "-" && e.args.size() == 1 &&
      e.args[0]->kind == dsl::ExprKind::Int)
    return -e.args[0]->ival;
  return std::nullopt;
}

uint32_t push(CompiledExpr& out, ExprNode node) {
  out.nodes.push_back(std::move(node));
  return static_cast<uint32_t>(out.nodes.size() - 1);
}

bool Checker::compile_root(const dsl::Expr& e, const Scope& scope, ValueType want,
                           const std::string& clause, CompiledExpr& out) {
  out = {};
  auto root = compile(e, scope, out);
  if (!root) {
    out = {};
    return false;
  }
  ValueType got = out.nodes[*root].type;
  bool ok = want == ValueType::Bool ? is_bool(got) : is_int(got);
  if (!ok) {
    error(e,
          fmt::format("'{}' needs {}, not {}", clause,
                      want == ValueType::Bool ? "a condition (bool)" : "an int", type_name(got)));
    out = {};
    return false;
  }
  out.root = *root;
  return true;
}

std::optional<uint32_t> Checker::compile(const dsl::Expr& e, const Scope& scope,
                                         CompiledExpr& out) {
  ExprNode node;
  node.loc = e.loc;
  switch (e.kind) {
    case dsl::ExprKind::Int:
      node.type = ValueType::Int;
      node.ival = e.ival;
      return push(out, std::move(node));
    case dsl::ExprKind::Bool:
      node.type = ValueType::Bool;
      node.ival = e.ival != 0;
      return push(out, std::move(node));
    case dsl::ExprKind::Str:
      node.type = ValueType::Str;
      node.sval = e.sval;
      return push(out, std::move(node));
    case dsl::ExprKind::List: return compile_list(e, out);
    case dsl::ExprKind::Name: return compile_name(e, scope, out);
    case dsl::ExprKind::Call: return compile_call(e, scope, out);
    case dsl::ExprKind::Binary: return compile_binary(e, scope, out);
    case dsl::ExprKind::Unary: {
      if (e.args.size() != 1) break;
      auto kid = compile(*e.args[0], scope, out);
      if (!kid) return std::nullopt;
      ValueType t = out.nodes[*kid].type;
      if (e.op == "not") {
        if (!is_bool(t)) {
          error(*e.args[0], fmt::format("'not' needs a bool operand, not {}", type_name(t)));
          return std::nullopt;
        }
        node.op = Op::Not;
        node.type = ValueType::Bool;
      } else {
        if (!is_int(t)) {
          error(*e.args[0], fmt::format("'-' needs an int operand, not {}", type_name(t)));
          return std::nullopt;
        }
        node.op = Op::Neg;
        node.type = ValueType::Int;
      }
      node.kids = {*kid};
      return push(out, std::move(node));
    }
  }
  error(e, "malformed expression");
  return std::nullopt;
}

std::optional<uint32_t> Checker::compile_list(const dsl::Expr& e, CompiledExpr& out) {
  ExprNode node;
  node.loc = e.loc;
  node.op = Op::Const;
  node.type = ValueType::List;
  for (const auto& element : e.args) {
    ExprNode item;
    item.loc = element->loc;
    if (element->kind == dsl::ExprKind::Str) {
      item.type = ValueType::Str;
      item.sval = element->sval;
    } else if (element->kind == dsl::ExprKind::Bool) {
      item.type = ValueType::Bool;
      item.ival = element->ival != 0;
    } else if (auto value = const_int(*element)) {
      item.type = ValueType::Int;
      item.ival = *value;
    } else {
      error(*element, "list elements must be strings, integers or booleans");
      return std::nullopt;
    }
    node.kids.push_back(push(out, std::move(item)));
  }
  return push(out, std::move(node));
}

std::optional<uint32_t> Checker::compile_name(const dsl::Expr& e, const Scope& scope,
                                              CompiledExpr& out) {
  const std::string name = joined(e.path);
  std::optional<FieldRef> ref;
  std::vector<std::string> candidates;
  std::span<const std::string> path(e.path);
  if (scope.pair && path.size() == 2 && path[0] == "edge" && path[1] == "kind") {
    if (!scope.classified) {
      error(e, "'edge.kind' is known only to boost and prune rules",
            {"a strong or weak rule decides the kind; a boost or prune rule sees it"});
      return std::nullopt;
    }
    ExprNode node;
    node.loc = e.loc;
    node.op = Op::Field;
    node.type = ValueType::Str;
    node.field.scope = FieldScope::EdgeKind;
    node.field.type = ValueType::Str;
    return push(out, std::move(node));
  }
  // An answer's events have no span context: `syscall`, `call.fn` and the like are unknown.
  auto allowed = [&](std::span<const std::string> p) {
    return !scope.answer || p.empty() || schema().span_opener(p[0]) == kNoKind;
  };
  if (scope.pair) {
    if (path.size() >= 2 && (path[0] == "from" || path[0] == "to") && allowed(path.subspan(1))) {
      bool from = path[0] == "from";
      ref = resolve_on(from ? scope.from : scope.to, path.subspan(1), from ? Side::From : Side::To);
    }
    for (const char* side : {"from", "to"})
      for (const auto& n :
           scope.answer ? answer_names() : names_on(side[0] == 'f' ? scope.from : scope.to))
        candidates.push_back(std::string(side) + "." + n);
    if (scope.answer) candidates.push_back("edge.kind");
  } else {
    if (!path.empty() && allowed(path)) ref = resolve_on(scope.self, path, Side::Self);
    candidates = scope.answer ? answer_names() : names_on(scope.self);
  }
  if (ref) {
    ExprNode node;
    node.loc = e.loc;
    node.op = Op::Field;
    node.type = ref->type;
    node.field = std::move(*ref);
    return push(out, std::move(node));
  }
  if (const NamedList* list = find_list(name)) {
    ExprNode node;
    node.loc = e.loc;
    node.op = Op::Const;
    node.type = ValueType::List;
    for (ExprNode element : list->elements) {
      element.loc = e.loc;
      node.kids.push_back(push(out, std::move(element)));
    }
    return push(out, std::move(node));
  }
  for (size_t q : packs_[pack_].visible)
    for (const auto& [list_name, list] : packs_[q].lists) candidates.push_back(list_name);
  auto hints = did_you_mean(name, candidates);
  if (scope.answer) {
    const bool subject = std::string_view(scope.answer) == "subject";
    const std::string what = subject      ? "the subject is a segment's first event"
                             : scope.pair ? "the edge's events are"
                                          : "a baseline candidate is a segment's first event";
    hints.push_back(scope.pair
                        ? fmt::format("{} of no known kind: name from. or to. with {}; "
                                      "or edge.kind",
                                      what, answer_names_text())
                        : fmt::format("{}, of no known kind: name {}", what, answer_names_text()));
    error(e,
          fmt::format("unknown field '{}' in an answer's {}", name, subject ? "subject" : "choice"),
          std::move(hints));
  } else if (scope.pair) {
    if (hints.empty() && !(path.size() >= 2 && (path[0] == "from" || path[0] == "to")))
      hints.push_back("name the events' fields through `from.` or `to.`");
    error(e, fmt::format("unknown field '{}'", name), std::move(hints));
  } else if (scope.self != kNoKind) {
    error(e, fmt::format("unknown field '{}' of event '{}'", name, schema().kind(scope.self).name),
          std::move(hints));
  } else {
    error(e, fmt::format("unknown name '{}'", name), std::move(hints));
  }
  return std::nullopt;
}

std::optional<uint32_t> Checker::compile_call(const dsl::Expr& e, const Scope& scope,
                                              CompiledExpr& out) {
  const std::string callee = joined(e.path);
  std::vector<uint32_t> kids;
  for (const auto& arg : e.args) {
    auto kid = compile(*arg, scope, out);
    if (!kid) return std::nullopt;
    kids.push_back(*kid);
  }
  auto arg_type = [&](size_t i) { return out.nodes[kids[i]].type; };
  ExprNode node;
  node.loc = e.loc;
  node.op = Op::Call;
  node.sval = callee;
  if (callee == "shared_symbols") {
    if (kids.size() != 2 && kids.size() != 3) {
      error(e, fmt::format("shared_symbols() takes 2 or 3 arguments, not {}", kids.size()));
      return std::nullopt;
    }
    for (size_t i = 0; i < kids.size(); ++i) {
      ValueType want = i < 2 ? ValueType::Stack : ValueType::List;
      if (arg_type(i) != want && arg_type(i) != ValueType::Null) {
        error(*e.args[i], fmt::format("argument {} of shared_symbols() must be a {}, not {}", i + 1,
                                      type_name(want), type_name(arg_type(i))));
        return std::nullopt;
      }
    }
    node.type = ValueType::Int;
  } else if (callee == "len") {
    if (kids.size() != 1) {
      error(e, fmt::format("len() takes 1 argument, not {}", kids.size()));
      return std::nullopt;
    }
    ValueType t = arg_type(0);
    if (t != ValueType::List && t != ValueType::Str && t != ValueType::Stack &&
        t != ValueType::Null) {
      error(*e.args[0],
            fmt::format("len() needs a list, a string or a stack, not {}", type_name(t)));
      return std::nullopt;
    }
    node.type = ValueType::Int;
  } else if (e.path.size() == 2 && e.path[0] == "lua") {
    if (!lua_function_visible(e.path[1])) {
      error(e, fmt::format("unknown Lua function '{}'", e.path[1]),
            {fmt::format("define it in a `lua [[ ... ]]` block of pack '{}' or of a pack it "
                         "requires",
                         units_[pack_].info.id)});
      return std::nullopt;
    }
    node.type = ValueType::Null;  // whatever Lua returns; the engine converts it
  } else {
    error(e, fmt::format("unknown function '{}'", callee),
          did_you_mean(callee, {"shared_symbols", "len"}));
    return std::nullopt;
  }
  node.kids = std::move(kids);
  return push(out, std::move(node));
}

std::optional<uint32_t> Checker::compile_binary(const dsl::Expr& e, const Scope& scope,
                                                CompiledExpr& out) {
  static const std::map<std::string, Op> ops = {{"or", Op::Or},
                                                {"and", Op::And},
                                                {"==", Op::Eq},
                                                {"!=", Op::Ne},
                                                {"<", Op::Lt},
                                                {"<=", Op::Le},
                                                {">", Op::Gt},
                                                {">=", Op::Ge},
                                                {"in", Op::In},
                                                {"not in", Op::NotIn},
                                                {"matches", Op::Matches},
                                                {"+", Op::Add},
                                                {"-", Op::Sub},
                                                {"*", Op::Mul},
                                                {"/", Op::Div},
                                                {"%", Op::Mod}};
  auto op = ops.find(e.op);
  if (op == ops.end() || e.args.size() != 2) {
    error(e, fmt::format("unknown operator '{}'", e.op));
    return std::nullopt;
  }
  auto left = compile(*e.args[0], scope, out);
  if (!left) return std::nullopt;
  auto right = compile(*e.args[1], scope, out);
  if (!right) return std::nullopt;
  const ValueType lt = out.nodes[*left].type, rt = out.nodes[*right].type;
  ExprNode node;
  node.loc = e.loc;
  node.op = op->second;
  node.kids = {*left, *right};
  switch (node.op) {
    case Op::And:
    case Op::Or:
      for (size_t i = 0; i < 2; ++i) {
        ValueType t = i == 0 ? lt : rt;
        if (!is_bool(t)) {
          error(*e.args[i], fmt::format("'{}' needs bool operands, not {}", e.op, type_name(t)));
          return std::nullopt;
        }
      }
      node.type = ValueType::Bool;
      break;
    case Op::Eq:
    case Op::Ne:
      if (!comparable(lt, rt)) {
        error(e, fmt::format("cannot compare {} with {}", type_name(lt), type_name(rt)));
        return std::nullopt;
      }
      node.type = ValueType::Bool;
      break;
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge:
      if (!comparable(lt, rt)) {
        error(e, fmt::format("cannot compare {} with {}", type_name(lt), type_name(rt)));
        return std::nullopt;
      }
      if (!is_int(lt) || !is_int(rt)) {
        error(e, fmt::format("'{}' needs int operands, not {}", e.op,
                             type_name(is_int(lt) ? rt : lt)));
        return std::nullopt;
      }
      node.type = ValueType::Bool;
      break;
    case Op::In:
    case Op::NotIn: {
      if (rt != ValueType::List && rt != ValueType::Stack && rt != ValueType::Null) {
        error(*e.args[1], fmt::format("'{}' needs a list or a stack on its right", e.op));
        return std::nullopt;
      }
      ValueType element = ValueType::Null;
      if (rt == ValueType::Stack) element = ValueType::Str;
      if (rt == ValueType::List) {
        const auto& kids = out.nodes[*right].kids;
        if (!kids.empty()) element = out.nodes[kids[0]].type;
        for (uint32_t kid : kids)
          if (!comparable(out.nodes[kid].type, element)) element = ValueType::Null;
      }
      if (!comparable(lt, element)) {
        error(e, fmt::format("cannot compare {} with {}", type_name(lt), type_name(element)));
        return std::nullopt;
      }
      node.type = ValueType::Bool;
      break;
    }
    case Op::Matches: {
      const ExprNode& pattern = out.nodes[*right];
      if (pattern.op != Op::Const || pattern.type != ValueType::Str) {
        error(*e.args[1], "'matches' needs a string pattern");
        return std::nullopt;
      }
      if (lt != ValueType::Str && lt != ValueType::Stack && lt != ValueType::Null) {
        error(*e.args[0], fmt::format("'matches' needs a string or a stack on its left, not {}",
                                      type_name(lt)));
        return std::nullopt;
      }
      node.type = ValueType::Bool;
      break;
    }
    default:  // arithmetic
      for (size_t i = 0; i < 2; ++i) {
        ValueType t = i == 0 ? lt : rt;
        if (!is_int(t)) {
          error(*e.args[i], fmt::format("'{}' needs int operands, not {}", e.op, type_name(t)));
          return std::nullopt;
        }
      }
      // A literal 0 on the right fails on every event the rule is evaluated on: said here,
      // not first by `graph`.
      if ((node.op == Op::Div || node.op == Op::Mod) && out.nodes[*right].op == Op::Const &&
          out.nodes[*right].ival == 0) {
        error(*e.args[1], node.op == Op::Div ? "division by zero" : "modulo by zero");
        return std::nullopt;
      }
      node.type = ValueType::Int;
      break;
  }
  return push(out, std::move(node));
}

}  // namespace cw::rules::check
