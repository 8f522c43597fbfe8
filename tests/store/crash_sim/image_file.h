// The file a crash image is written to before Store::Open recovers it:
// kept open, mapped and sparse (on tmpfs), so that writing the next image
// costs only the pages that differ from what the file holds, not a whole
// pool's worth of copying and page allocation.
//
// Thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pmstore::crash_sim {

class ImageFile {
 public:
  explicit ImageFile(std::string path) : path_(std::move(path)) {}
  ~ImageFile();
  ImageFile(const ImageFile&) = delete;
  ImageFile& operator=(const ImageFile&) = delete;

  const std::string& path() const { return path_; }

  // Makes the file hold the first `length` bytes of `persisted`, except
  // for the 64-byte `lines`, which hold `live`'s bytes. nonzero[i]: page i
  // of `persisted` holds anything but zeros. False (and *error set) when
  // the file cannot be made or sized.
  bool Write(const std::vector<char>& persisted, const std::vector<bool>& nonzero, uint64_t length,
             const std::vector<uint64_t>& lines, const char* live, std::string* error);

 private:
  std::string path_;
  int fd_ = -1;
  char* map_ = nullptr;
  std::vector<bool> visited_;
};

}  // namespace pmstore::crash_sim
