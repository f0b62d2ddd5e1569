#pragma once
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace hucprof {

// The exit codes a failure ends a command with (docs/configuration.md, "Exit codes").
inline constexpr int kExitCannotRun = 1;  // nothing can work on this host: the kernel, a port
inline constexpr int kExitBadInput = 2;   // a flag, config, file or value the user must fix

// Why something failed: one line of words for the user, and the exit code it means if it ends
// the command. Whoever finds the cause knows which it is; the callers only pass it on. Most
// failures are of what the user gave, hence the default.
struct Error {
  std::string text;
  int exit_code = kExitBadInput;
};

template <class T>
class Result;

// What a Result<T> takes as its value: anything a T is made from, but an Error or a Result.
template <class U, class T>
concept ResultValue =
    std::is_constructible_v<T, U> && !std::is_same_v<std::remove_cvref_t<U>, Error> &&
    !std::is_same_v<std::remove_cvref_t<U>, Result<T>>;

// A value or the Error in its place: the one way a function says it failed (std::expected is
// C++23). Built from either implicitly, so `return value;` and `return Error{...};` both read
// as what they are. Reading value() of an error (or error() of a value) is a bug: it throws
// rather than reading garbage.
template <class T>
class [[nodiscard]] Result {
 public:
  template <ResultValue<T> U = T>
  Result(U&& value) : state_(std::in_place_index<0>, std::forward<U>(value)) {}
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return state_.index() == 0; }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

// Success that carries nothing: only whether, and the Error if not.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}

  bool ok() const { return !error_; }
  const Error& error() const { return error_.value(); }

 private:
  std::optional<Error> error_;
};

}  // namespace hucprof
