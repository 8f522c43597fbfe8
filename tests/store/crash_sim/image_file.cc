#include "store/crash_sim/image_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace pmstore::crash_sim {
namespace {

constexpr uint64_t kLine = 64;
constexpr uint64_t kPage = 4096;
// Room for any length a pool reaches, including growth by the store that
// recovers an image.
constexpr uint64_t kReserve = 64ull << 20;

}  // namespace

ImageFile::~ImageFile() {
  if (map_ != nullptr) munmap(map_, kReserve);
  if (fd_ >= 0) close(fd_);
}

// Pages the file holds data in are the last image's non-zero pages plus
// whatever the last recovery touched (on tmpfs a read fault allocates a
// page too). Those are compared and fixed, zero ones punched out; the
// other non-zero pages of the image are then written.
bool ImageFile::Write(const std::vector<char>& persisted, const std::vector<bool>& nonzero, uint64_t length,
                      const std::vector<uint64_t>& lines, const char* live, std::string* error) {
  if (fd_ < 0) {
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    void* p = fd_ < 0 ? MAP_FAILED : mmap(nullptr, kReserve, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) {
      *error = "cannot map the image file " + path_ + ": " + std::strerror(errno);
      return false;
    }
    map_ = static_cast<char*>(p);
  }
  struct stat st;
  if (length > kReserve || fstat(fd_, &st) != 0 ||
      (static_cast<uint64_t>(st.st_size) != length && ftruncate(fd_, static_cast<off_t>(length)) != 0)) {
    *error = "cannot size the image file " + path_ + " to " + std::to_string(length) + " bytes";
    return false;
  }
  visited_.assign(length / kPage + 1, false);
  uint64_t punch_begin = 0, punch_end = 0;  // a run of pages to punch out
  auto punch = [&] {
    if (punch_end > punch_begin) {
      fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(punch_begin),
                static_cast<off_t>(punch_end - punch_begin));
    }
    punch_begin = punch_end = 0;
  };
  for (off_t at = 0; static_cast<uint64_t>(at) < length;) {
    const off_t data = lseek(fd_, at, SEEK_DATA);
    if (data < 0 || static_cast<uint64_t>(data) >= length) break;
    const uint64_t hole = std::min<uint64_t>(static_cast<uint64_t>(lseek(fd_, data, SEEK_HOLE)), length);
    for (uint64_t page = static_cast<uint64_t>(data) & ~(kPage - 1); page < hole; page += kPage) {
      visited_[page / kPage] = true;
      const uint64_t n = std::min(kPage, length - page);
      if (!nonzero[page / kPage] && n == kPage) {
        if (punch_end != page) punch();
        if (punch_end == 0) punch_begin = page;
        punch_end = page + kPage;
      } else if (std::memcmp(map_ + page, persisted.data() + page, n) != 0) {
        std::memcpy(map_ + page, persisted.data() + page, n);
      }
    }
    punch();
    at = static_cast<off_t>(hole);
  }
  for (uint64_t page = 0; page < length; page += kPage) {
    if (nonzero[page / kPage] && !visited_[page / kPage]) {
      std::memcpy(map_ + page, persisted.data() + page, std::min(kPage, length - page));
    }
  }
  for (uint64_t line : lines) std::memcpy(map_ + line, live + line, kLine);
  return true;
}

}  // namespace pmstore::crash_sim
