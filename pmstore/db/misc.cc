// Small public pieces: names, write batches, pinned values.
#include "pmstore/options.h"
#include "pmstore/pinned_value.h"
#include "pmstore/db/pin_registry.h"
#include "pmstore/write_batch.h"

namespace pmstore {

std::string_view GranularityName(Granularity granularity) {
  switch (granularity) {
    case Granularity::kByte: return "byte";
    case Granularity::kCacheLine: return "cache_line";
    case Granularity::kPage: return "page";
  }
  return "unknown";
}

void WriteBatch::Put(std::string_view key, std::string_view value) {
  ops_.push_back(Op{OpKind::kPut, std::string(key), std::string(value)});
  bytes_ += key.size() + value.size();
}

void WriteBatch::Delete(std::string_view key) {
  ops_.push_back(Op{OpKind::kDelete, std::string(key), std::string()});
  bytes_ += key.size();
}

void WriteBatch::Clear() {
  ops_.clear();
  bytes_ = 0;
}

PinnedValue::PinnedValue(PinnedValue&& other) noexcept
    : registry_(other.registry_), pin_id_(other.pin_id_), value_(other.value_) {
  other.registry_ = nullptr;
  other.value_ = {};
}

PinnedValue& PinnedValue::operator=(PinnedValue&& other) noexcept {
  if (this != &other) {
    Reset();
    registry_ = other.registry_;
    pin_id_ = other.pin_id_;
    value_ = other.value_;
    other.registry_ = nullptr;
    other.value_ = {};
  }
  return *this;
}

void PinnedValue::Reset() {
  if (registry_ != nullptr) registry_->Unpin(pin_id_);
  registry_ = nullptr;
  value_ = {};
}

}  // namespace pmstore
