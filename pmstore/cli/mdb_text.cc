#include "pmstore/cli/mdb_text.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace pmstore::cli {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendHex(unsigned char byte, std::string* out) {
  out->push_back(kHexDigits[byte >> 4]);
  out->push_back(kHexDigits[byte & 0xf]);
}

// Header keywords that ask for what a pool cannot be: a named database
// among several, or several values under one key (LMDB's DUPSORT family).
constexpr const char* kDuplicateFlags[] = {"duplicates", "dupsort", "dupfixed", "integerdup", "reversedup"};
// Flags whose data loads as it is, only ordered differently by LMDB.
constexpr const char* kOrderFlags[] = {"integerkey", "reversekey"};
// Environment settings with no meaning for a pool.
constexpr const char* kIgnored[] = {"mapsize", "mapaddr", "maxreaders", "db_pagesize"};

template <size_t N>
bool OneOf(std::string_view word, const char* const (&words)[N]) {
  for (const char* w : words) {
    if (word == w) return true;
  }
  return false;
}

}  // namespace

// ---- Writer ----------------------------------------------------------------

void MdbTextWriter::WriteHeader(uint64_t mapsize) {
  std::fprintf(out_, "VERSION=3\nformat=%s\ntype=btree\nmapsize=%llu\nmaxreaders=126\ndb_pagesize=%ld\nHEADER=END\n",
               format_ == MdbTextFormat::kPrint ? "print" : "bytevalue", static_cast<unsigned long long>(mapsize),
               sysconf(_SC_PAGESIZE));
}

void MdbTextWriter::WriteEntry(std::string_view key, std::string_view value) {
  WriteLine(key);
  WriteLine(value);
}

void MdbTextWriter::WriteFooter() { std::fputs("DATA=END\n", out_); }

void MdbTextWriter::WriteLine(std::string_view bytes) {
  line_.clear();
  line_.push_back(' ');
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (format_ == MdbTextFormat::kByteValue) {
      AppendHex(byte, &line_);
    } else if (byte >= 0x20 && byte <= 0x7e && byte != '\\') {
      line_.push_back(c);
    } else {
      // A backslash too, as \5c: mdb_load 0.9.24 decodes "\\" wrongly after
      // an earlier escape on the same line, but every version reads \5c.
      line_.push_back('\\');
      AppendHex(byte, &line_);
    }
  }
  line_.push_back('\n');
  std::fwrite(line_.data(), 1, line_.size(), out_);
}

// ---- Reader ----------------------------------------------------------------

MdbTextReader::~MdbTextReader() { std::free(buffer_); }

bool MdbTextReader::ReadLine() {
  const ssize_t n = getline(&buffer_, &capacity_, in_);
  if (n < 0) return false;
  ++line_number_;
  size_t size = static_cast<size_t>(n);
  if (size > 0 && buffer_[size - 1] == '\n') --size;
  current_ = std::string_view(buffer_, size);
  return true;
}

absl::Status MdbTextReader::Error(std::string_view what) const {
  return absl::InvalidArgumentError(absl::StrCat(name_, " line ", line_number_, ": ", std::string(what)));
}

absl::StatusOr<bool> MdbTextReader::NextSection() {
  if (!ReadLine()) return false;
  format_ = MdbTextFormat::kByteValue;
  do {
    if (current_ == "HEADER=END") return true;
    if (absl::Status status = HeaderLine(current_); !status.ok()) return status;
  } while (ReadLine());
  return Error("the input ends inside a header (no HEADER=END)");
}

absl::Status MdbTextReader::HeaderLine(std::string_view line) {
  const size_t eq = line.find('=');
  if (eq == std::string_view::npos) return Error("not a header line (key=value) of mdb_dump's format");
  const std::string_view keyword = line.substr(0, eq), value = line.substr(eq + 1);
  if (keyword == "VERSION") {
    int version = 0;
    if (!absl::SimpleAtoi(std::string(value), &version) || version < 1 || version > 3) {
      return Error(absl::StrCat("unsupported VERSION ", std::string(value), " (mdb_dump writes 3)"));
    }
  } else if (keyword == "format") {
    if (value == "print") {
      format_ = MdbTextFormat::kPrint;
    } else if (value == "bytevalue") {
      format_ = MdbTextFormat::kByteValue;
    } else {
      return Error(absl::StrCat("unsupported format ", std::string(value), " (print or bytevalue)"));
    }
  } else if (keyword == "type") {
    if (value != "btree") return Error(absl::StrCat("unsupported type ", std::string(value), " (btree)"));
  } else if (keyword == "database") {
    return Error(absl::StrCat("named sub-database '", std::string(value),
                              "': a pool holds one unnamed key space; dump the main database (mdb_dump without "
                              "-s or -a), or load each sub-database into a pool of its own"));
  } else if (OneOf(keyword, kDuplicateFlags)) {
    return Error(absl::StrCat("a DUPSORT database (", std::string(line),
                              "): a pool holds one value per key, not several"));
  } else if (OneOf(keyword, kOrderFlags)) {
    notes_.push_back(absl::StrCat(std::string(keyword), ": LMDB ordered these keys ",
                                  keyword == "integerkey" ? "as native integers" : "from their last byte",
                                  "; pmstore orders them bytewise"));
  } else if (!OneOf(keyword, kIgnored)) {
    notes_.push_back(absl::StrCat("line ", line_number_, ": unrecognized keyword ignored: ", std::string(keyword)));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> MdbTextReader::NextEntry(std::string* key, std::string* value) {
  if (!ReadLine()) return Error("the input ends before DATA=END: the dump is truncated");
  if (current_ == "DATA=END") return false;
  if (current_.empty() || current_[0] != ' ') {
    return Error("expected a data line (starting with a space) or DATA=END");
  }
  if (absl::Status status = Decode(current_.substr(1), key); !status.ok()) return status;
  if (!ReadLine() || current_.empty() || current_[0] != ' ') return Error("a key without a value line");
  if (absl::Status status = Decode(current_.substr(1), value); !status.ok()) return status;
  return true;
}

absl::Status MdbTextReader::Decode(std::string_view text, std::string* out) const {
  out->clear();
  if (format_ == MdbTextFormat::kByteValue) {
    if (text.size() % 2 != 0) return Error("an odd number of hex digits");
    out->reserve(text.size() / 2);
    for (size_t i = 0; i < text.size(); i += 2) {
      const int high = HexValue(text[i]), low = HexValue(text[i + 1]);
      if (high < 0 || low < 0) return Error("not a hex digit in a bytevalue line");
      out->push_back(static_cast<char>(high << 4 | low));
    }
    return absl::OkStatus();
  }
  out->reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out->push_back(text[i]);
    } else if (i + 1 < text.size() && text[i + 1] == '\\') {
      out->push_back('\\');
      ++i;
    } else if (i + 2 < text.size() && HexValue(text[i + 1]) >= 0 && HexValue(text[i + 2]) >= 0) {
      out->push_back(static_cast<char>(HexValue(text[i + 1]) << 4 | HexValue(text[i + 2])));
      i += 2;
    } else {
      out->push_back('\\');  // LMDB 0.9.24's print mode leaves a backslash as it is
    }
  }
  return absl::OkStatus();
}

}  // namespace pmstore::cli
