// A value read without copying: a view into the mapped pool that stays
// valid while this object lives, even if another thread overwrites or
// deletes the key meanwhile (the space is not reused until the pin is
// released).
//
// Movable, not copyable. Release it (destroy or Reset) before the store is
// destroyed. Holding pins for long only delays space reuse; it never
// blocks readers or writers.
#pragma once

#include <cstdint>
#include <string_view>

namespace pmstore {

class PinRegistry;

class PinnedValue {
 public:
  PinnedValue() = default;
  PinnedValue(PinnedValue&& other) noexcept;
  PinnedValue& operator=(PinnedValue&& other) noexcept;
  PinnedValue(const PinnedValue&) = delete;
  PinnedValue& operator=(const PinnedValue&) = delete;
  ~PinnedValue() { Reset(); }

  std::string_view value() const { return value_; }
  bool pinned() const { return registry_ != nullptr; }
  // Releases the pin; value() becomes empty.
  void Reset();

 private:
  friend class StoreImpl;
  PinRegistry* registry_ = nullptr;
  uint64_t pin_id_ = 0;
  std::string_view value_;
};

}  // namespace pmstore
