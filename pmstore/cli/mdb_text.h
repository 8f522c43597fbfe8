// The text format of LMDB's mdb_dump and mdb_load (after Berkeley DB's
// db_dump), for `pmstore dump` and `pmstore load`:
//
//   VERSION=3
//   format=bytevalue            (or format=print)
//   type=btree
//   mapsize=1073741824          (and other key=value lines)
//   HEADER=END
//    6b6579                     one line per key, then one per value, each
//    76616c7565                 starting with a space: hex pairs, or (print)
//   DATA=END                    printable bytes with \XX for the others
//
// A file may hold several such sections (mdb_dump -a writes one per named
// database). This module only encodes and decodes; it knows nothing of
// pools. Writer and reader work on stdio streams.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pmstore::cli {

enum class MdbTextFormat {
  kByteValue,  // hex pairs: exact for any bytes (mdb_dump's default)
  kPrint,      // printable ASCII as itself (mdb_dump -p)
};

class MdbTextWriter {
 public:
  MdbTextWriter(std::FILE* out, MdbTextFormat format) : out_(out), format_(format) {}

  // mdb_dump's header; `mapsize` becomes the map size mdb_load gives a new
  // LMDB environment.
  void WriteHeader(uint64_t mapsize);
  void WriteEntry(std::string_view key, std::string_view value);
  void WriteFooter();
  // False when a write to the stream failed (errno says why).
  bool ok() const { return std::ferror(out_) == 0; }

 private:
  void WriteLine(std::string_view bytes);
  std::FILE* out_;
  MdbTextFormat format_;
  std::string line_;
};

// Reads sections one after the other. Every error is InvalidArgument, one
// line naming the input and the line number, and ends the reading: input
// pmstore cannot hold (a named sub-database, several values per key) is
// refused at its header, before any of its data.
class MdbTextReader {
 public:
  // `name` is how messages name the input: "stdin" or a path.
  MdbTextReader(std::FILE* in, std::string name) : in_(in), name_(std::move(name)) {}
  ~MdbTextReader();
  MdbTextReader(const MdbTextReader&) = delete;
  MdbTextReader& operator=(const MdbTextReader&) = delete;

  // Reads the next section's header: false when the input has ended.
  absl::StatusOr<bool> NextSection();
  // The next key and value of the section: false at its DATA=END.
  absl::StatusOr<bool> NextEntry(std::string* key, std::string* value);
  // What the header said that pmstore reads differently (key order of an
  // integerkey database, keywords it does not know), one line each.
  const std::vector<std::string>& notes() const { return notes_; }
  uint64_t line() const { return line_number_; }
  const std::string& name() const { return name_; }

 private:
  // The next line without its newline; false at the end of the input.
  bool ReadLine();
  absl::Status Error(std::string_view what) const;
  absl::Status HeaderLine(std::string_view line);
  absl::Status Decode(std::string_view text, std::string* out) const;

  std::FILE* in_;
  std::string name_;
  char* buffer_ = nullptr;
  size_t capacity_ = 0;
  std::string_view current_;
  uint64_t line_number_ = 0;
  MdbTextFormat format_ = MdbTextFormat::kByteValue;
  std::vector<std::string> notes_;
};

}  // namespace pmstore::cli
