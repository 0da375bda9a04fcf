// A compile-time list of GPU operator types: the one list a launcher names its GPU operators in. The same
// list registers them (operator_registry::add_gpu_operators, each under its `class_name`) and builds the
// fused kernel (XF_KERNEL in framework/gpu/fused_kernel.cuh), so a GPU operator that is registered but not
// compiled into the kernel cannot be written. Lists nest: gpu_operator_list<builtin_gpu_operators, my_op>.
#pragma once

#include <concepts>
#include <string_view>
#include <typeindex>
#include <typeinfo>
#include <vector>

namespace xf {

template <class... Ops>
struct gpu_operator_list {};

/// A GPU operator names its class, as topologies write it: `static constexpr char class_name[] = "scale";`
template <class Op>
concept named_gpu_operator = requires {
  { std::string_view(Op::class_name) } -> std::same_as<std::string_view>;
};

namespace list_detail {

template <class... Lists>
struct concat;
template <>
struct concat<> {
  using type = gpu_operator_list<>;
};
template <class... A>
struct concat<gpu_operator_list<A...>> {
  using type = gpu_operator_list<A...>;
};
template <class... A, class... B, class... Rest>
struct concat<gpu_operator_list<A...>, gpu_operator_list<B...>, Rest...> {
  using type = typename concat<gpu_operator_list<A..., B...>, Rest...>::type;
};

template <class T>
struct flat {
  using type = gpu_operator_list<T>;
};
template <class... A>
struct flat<gpu_operator_list<A...>> {
  using type = typename concat<typename flat<A>::type...>::type;
};

template <class Prefix, class List>
struct after_prefix {
  static constexpr bool value = false;
};
template <class List>
struct after_prefix<gpu_operator_list<>, List> {
  static constexpr bool value = true;
  using type = List;
};
template <class Op, class... Prefix, class... Rest>
struct after_prefix<gpu_operator_list<Op, Prefix...>, gpu_operator_list<Op, Rest...>>
    : after_prefix<gpu_operator_list<Prefix...>, gpu_operator_list<Rest...>> {};

template <class List>
struct types_of;
template <class... Ops>
struct types_of<gpu_operator_list<Ops...>> {
  static std::vector<std::type_index> get() { return {std::type_index(typeid(Ops))...}; }
};

}  // namespace list_detail

/// The operators of `Items` (operator types or lists, nested to any depth) as one flat list, in order.
template <class... Items>
using flatten = typename list_detail::flat<gpu_operator_list<Items...>>::type;

/// Whether `List`'s operators begin with `Prefix`'s, in order (both flattened): `value`, and then `type`,
/// the flat list of the operators after them.
template <class Prefix, class List>
using after_prefix = list_detail::after_prefix<flatten<Prefix>, flatten<List>>;

/// The C++ types of a list's operators, flattened, in kernel order (an operator's position is its index in
/// the fused kernel's dispatch).
template <class List>
std::vector<std::type_index> operator_types() {
  return list_detail::types_of<flatten<List>>::get();
}

}  // namespace xf
