// The `pmstore` command: create, inspect and exercise pools from the shell.
// Flags live here (ABSL_FLAG belongs in the binary's main file); each
// subcommand copies them into a config struct and calls one function.
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_split.h"
#include "pmstore/base/cli.h"
#include "pmstore/base/units.h"
#include "pmstore/cli/bench.h"
#include "pmstore/cli/commands.h"
#include "pmstore/version.h"

ABSL_FLAG(std::string, size, "",
          "create, load, bench: size of a new pool, e.g. 64M, 1G (load default 64M; bench default: sized to fit "
          "--num keys of --value-size, at least 1G)");
ABSL_FLAG(std::string, max_size, "", "create, load: largest size a new pool may grow to (default 16 x --size)");
ABSL_FLAG(std::string, mode, "0644",
          "create, load: permission bits of a new pool file in octal, less the umask (mdb_env_open's mode), e.g. "
          "0640");
ABSL_FLAG(std::string, file, "",
          "put: read the value from this file; dump: write the dump here; load: read it from here "
          "(default stdout / stdin)");
ABSL_FLAG(bool, print, false, "dump: printable characters as themselves (mdb_dump -p) instead of hex");
ABSL_FLAG(std::string, prefix, "", "list: only keys starting with this");
ABSL_FLAG(uint64_t, limit, 0, "list: at most this many keys (0: all)");
ABSL_FLAG(bool, reverse, false,
          "list: descending key order (with --limit: the last N keys); bench: seekrandom seeks for the last key <= a "
          "random one and reads back from there");
ABSL_FLAG(bool, json, false, "stats, copy, readers: print JSON");
ABSL_FLAG(bool, clear_stale, false, "readers: first free the slots of processes that died with the pool open");
ABSL_FLAG(bool, force, false, "create: destroy the pool already at POOL (a file or a device DAX device) first");
ABSL_FLAG(bool, progress, true, "copy: a progress line a second on stderr (--noprogress: none)");
ABSL_FLAG(bool, exclusive, false,
          "put, del, load, get, list, stats, dump, copy, bench: open the pool alone (Options::exclusive). A command "
          "that writes shuts out every other open, read-only ones included; one that only reads shuts out writers "
          "(other read-only opens may share it), so no writer's commit runs under a long dump or copy. Refused (exit "
          "2, naming a holder's pid) while an open it would shut out holds the pool, and the opens it shuts out are "
          "refused while it runs. bench: pmstore's opens (LMDB has no such mode)");
// --- bench: db_bench's names -------------------------------------------------
ABSL_FLAG(std::string, benchmarks, "fillrandom,readrandom",
          "bench: comma-separated fillseq, fillrandom, overwrite, updaterandom (a Get, then a Put of the same random "
          "key; --transactions: in a transaction), readrandom, readmissing (keys never written), "
          "multiget (--batch keys per MultiGet), readseq, readreverse (the same scan backward), seekrandom (a seek and "
          "--seek_nexts more entries), deleterandom, readwhilewriting (--threads readers while one "
          "more thread puts), reopen (close, then time the open, the first read after it (reopen.firstread) and the "
          "first write (reopen.firstwrite)), reopenreadonly (close, then open read-only for the reads after it)");
ABSL_FLAG(uint64_t, num, 1000000, "bench: keys (and operations per benchmark)");
ABSL_FLAG(uint64_t, reads, 0,
          "bench: operations (keys) of readrandom, readmissing, multiget, readseq and readwhilewriting's readers "
          "(0: --num)");
ABSL_FLAG(int, batch, 32, "bench: keys per MultiGet call in multiget");
ABSL_FLAG(int, seek_nexts, 0, "bench: entries seekrandom reads after each seek (db_bench's seek_nexts)");
ABSL_FLAG(int, key_size, 16, "bench: key bytes");
ABSL_FLAG(std::string, value_size, "100", "bench: value bytes, 0 to 4M (e.g. 100, 1536K, 4M)");
ABSL_FLAG(int, threads, 1,
          "bench: threads sharing the operations (readwhilewriting: the readers; one writer runs besides; "
          "updaterandom: each on keys of its own)");
ABSL_FLAG(bool, sync, true, "bench: durable writes (--nosync: sync=false, durable only at close)");
ABSL_FLAG(bool, transactions, false,
          "bench: updaterandom makes each update a transaction (BeginTransaction, Get, Put, Commit; begun again on "
          "Aborted, and the aborts counted); LMDB's updates are one write transaction with or without it");
ABSL_FLAG(std::string, output_format, "normal", "bench: normal or json");
ABSL_FLAG(std::string, compare, "", "bench: also run the same workload on 'lmdb' (MDB_WRITEMAP) and print ratios");
ABSL_FLAG(bool, lmdb_first, false, "bench: with --compare=lmdb, run LMDB's workload before pmstore's (default: after)");

namespace {

using pmstore::base::Subcommand;

const std::vector<Subcommand>& Subcommands() {
  static const std::vector<Subcommand> kSubcommands = {
      {"create", "create POOL --size=SIZE [--max-size=SIZE] [--mode=0640] [--force]",
       "Create a pool file, or a pool on a device DAX device.",
       "Creates POOL of --size bytes (rounded up to 2 MiB, space allocated), able to grow\n"
       "in 2 MiB steps up to --max-size, with permissions --mode less the umask (0644 by\n"
       "default). Fails when POOL exists; --force destroys the pool there first (as\n"
       "'pmstore destroy'), and still refuses a file that is not a pool.\n\n"
       "POOL may be a device DAX device (/dev/daxX.Y, e.g. 'ndctl create-namespace\n"
       "--mode=devdax --align=2M'): the device is the pool, of the device's size (no\n"
       "--size), never growing, mapped at the device's align (2 MiB or 1 GiB) and\n"
       "persisted with cache-line flushes. A device that holds a pool is refused\n"
       "without --force.\n\n"
       "The commands that only read (get, list, check, dump, copy) open a pool\n"
       "read-only: read permission is enough, and any number of them may run at once;\n"
       "all but check also beside one process that has it open for writing, whose\n"
       "commits they read.\n"
       "stats opens it for writing, to report what writes get, or read-only when the\n"
       "user may not write it or another process holds it. --exclusive (put, del,\n"
       "load, get, list, stats, dump, copy, bench) opens a pool alone: a command that\n"
       "writes shuts out every other open, one that reads shuts out writers; it is\n"
       "refused, naming a holder's pid, while an open it would shut out holds the pool.\n\n"
       "Exit status: 0 created, 2 error.",
       {"size", "max_size", "mode", "force"}},
      {"destroy", "destroy POOL", "Remove a pool: its file, or a device's pool.",
       "Removes the pool file (the removal made durable), or erases the superblock of a\n"
       "pool on a device DAX device, which then holds no pool. Refuses a pool that a\n"
       "process has open, and a file or device that holds no pool (it is left as it is).\n\n"
       "Exit status: 0 destroyed, 2 error.",
       {}},
      {"put", "put POOL KEY [VALUE] [--file=F] [--exclusive]", "Store VALUE (or --file, or stdin) under KEY.",
       "Durable when the command exits 0. When the device or file system fails to make\n"
       "it durable (msync, fdatasync, fallocate), one line names the pool and the call,\n"
       "e.g. 'pmstore: msync(POOL, 4096 bytes at offset 8192): Input/output error', and\n"
       "the exit status is 2; earlier values stay, the failed one may or may not.\n\n"
       "Exit status: 0 stored, 2 error.", {"file", "exclusive"}},
      {"get", "get POOL KEY [--exclusive]", "Print the value of KEY (raw bytes).",
       "Exit status: 0 printed, 1 KEY is absent, 2 error.", {"exclusive"}},
      {"del", "del POOL KEY [--exclusive]", "Delete KEY (absent is fine).", "Exit status: 0, 2 error.", {"exclusive"}},
      {"list", "list POOL [--prefix=P] [--limit=N] [--reverse] [--exclusive]", "Print keys in order, one a line.",
       "--reverse prints them in descending order: with --limit=N, the last N keys\n"
       "(LMDB's MDB_PREV from MDB_LAST).\n\nExit status: 0, 2 error.",
       {"prefix", "limit", "reverse", "exclusive"}},
      {"stats", "stats POOL [--json] [--exclusive]", "Keys, space, granularity, DAX, MAP_SYNC and PMD-mapped share.",
       "The PMD share is read back from the kernel (pagemap or smaps) for the pool's\n"
       "resident pages.\n\nExit status: 0, 2 error.", {"json", "exclusive"}},
      {"check", "check POOL [--json]", "Verify every checksum and structure of POOL.",
       "Replays the last commit as an open does, then verifies the superblock, root,\n"
       "chunk table, every leaf and record checksum, key order, and that the allocation\n"
       "bitmaps match what the index reaches.\n"
       "Opens POOL read-only, beside a process that may have it open for writing: the\n"
       "check then holds that writer's next commit off while it checks the newest one.\n"
       "--json prints {path, clean, keys, leaves, records_verified, bytes_verified,\n"
       "problems}.\n\nExit status: 0 clean, 1 damaged (problems listed), 2 cannot open.",
       {"json"}},
      {"dump", "dump POOL [--print] [--file=F] [--exclusive]", "Write every key and value in mdb_dump's text format.",
       "The format of LMDB's mdb_dump (VERSION=3, type=btree, one line per key and per\n"
       "value, in key order), so mdb_load and other tools read it: `pmstore dump POOL\n"
       "| mdb_load DB` makes an LMDB database of a pool. Hex by default;\n"
       "--print writes printable ASCII as itself and \\XX for the rest.\n"
       "Opens POOL read-only, beside a process that may have it open for writing;\n"
       "--exclusive keeps writers out until the dump is written.\n\n"
       "Exit status: 0, 2 error.",
       {"print", "file", "exclusive"}},
      {"load", "load POOL [--file=F] [--size=SIZE] [--max-size=SIZE] [--mode=0640] [--exclusive]",
       "Load a dump in mdb_dump's text format (LMDB's or pmstore's) into POOL.",
       "Reads what `mdb_dump DB` or `pmstore dump` writes, hex or print, from stdin or\n"
       "--file, and puts every entry (replacing a key's old value), committed durably\n"
       "1024 entries at a time. POOL is created when missing (--size, --max-size,\n"
       "--mode).\n"
       "Input a pool cannot hold is refused before anything is written: a named\n"
       "sub-database (mdb_dump -s or -a) or a DUPSORT database. On bad input later on,\n"
       "the message says how many entries before it were loaded.\n\n"
       "Example (migrate an LMDB database):\n  mdb_dump /var/lib/app/db | pmstore load /mnt/pmem0/pool\n\n"
       "Exit status: 0 loaded, 2 error.",
       {"file", "size", "max_size", "mode", "exclusive"}},
      {"copy", "copy POOL DEST [--json] [--noprogress] [--exclusive]",
       "Copy POOL into a new pool DEST (mdb_copy's job).",
       "Copies every key and value of POOL into a new pool DEST, as mdb_copy copies an\n"
       "LMDB environment. DEST is built as DEST.copying.PID.N, made durable, then\n"
       "renamed to DEST: DEST never names a half-made pool, and a failure (a full disk\n"
       "too) leaves nothing behind. DEST has POOL's size (allocated up front),\n"
       "maximum size and permission bits (less the umask), and holds the keys packed\n"
       "in key order. DEST must not exist, or be a device DAX device that holds no\n"
       "pool: the copy fills it, hidden until it is durable.\n"
       "DEST is in the current pool format: copying a format version 1 pool converts\n"
       "it (its maximum size is then doubled, for the larger leaves).\n"
       "POOL is opened read-only, beside a process that may have it open for writing;\n"
       "--exclusive keeps writers out until the copy is made. A process that has the\n"
       "pool open can copy it itself with Store::CopyTo (C: pmstore_copy_to, Python:\n"
       "store.copy_to), and go on writing meanwhile.\n\n"
       "Prints a progress line a second on stderr once a copy runs past a second\n"
       "(--noprogress: none), then a summary on stdout (--json: as JSON).\n\n"
       "Example:\n  pmstore copy /mnt/pmem0/pool /backup/pool-$(date +%F)\n\n"
       "Exit status: 0 copied, 2 error (DEST exists, POOL missing or in use, no space).",
       {"json", "progress", "exclusive"}},
      {"readers", "readers POOL [--clear-stale] [--json]", "List the processes that have POOL open (mdb_stat -r).",
       "Every open of a pool, in any process, holds a slot in the pool's reader table,\n"
       "a small file in /dev/shm. This reads that table, never the pool, so it\n"
       "answers while a service holds the pool open for writing. Each line gives the\n"
       "slot, the pid, whether that open may write, when it opened the pool, the\n"
       "last commit of a writable open (the newest it made or found at open; LMDB's\n"
       "last transaction id), and the oldest commit that a snapshot, iterator,\n"
       "transaction or pinned value of that open still reads (LMDB's reader txnid;\n"
       "'-' when none). Space freed by later commits waits for the pinned one, so a\n"
       "pin far behind the last commit names what keeps a pool growing. A slot\n"
       "marked stale belongs to a process that died with the pool open; --clear-stale\n"
       "frees those first (mdb_reader_check; it needs write permission on the table,\n"
       "which has the pool file's permission bits). Opens that could not reach\n"
       "/dev/shm are not listed.\n\n"
       "Example:\n  pmstore readers /mnt/pmem0/pool --clear-stale\n\n"
       "Exit status: 0, 2 error (POOL missing, a table of another pmstore version).",
       {"clear_stale", "json"}},
      {"bench", "bench POOL [--benchmarks=...] [--num=N] [--compare=lmdb] [flags]",
       "db_bench's workloads on POOL (created when missing), optionally against LMDB.",
       "Benchmarks run in the order given; fillseq and fillrandom start from an empty\n"
       "pool, as in db_bench. Per benchmark: ops/s, MB/s, latency p50/p99/p99.9.\n"
       "--compare=lmdb runs the same workload on POOL.lmdb (MDB_WRITEMAP, one synced\n"
       "commit per write when --sync) and prints pmstore/lmdb ratios. LMDB runs after\n"
       "pmstore, or before it with --lmdb-first: the order moves some figures (fillseq's\n"
       "ratio most; doc/STORE.md), so run both orders before trusting one.\n\n"
       "readrandom looks up random keys of the key space: after fillseq every one is\n"
       "present; after fillrandom about 63% are (db_bench's semantics), and a note says\n"
       "so, since misses are cheaper. readmissing (LevelDB's) looks up keys never\n"
       "written, next to written ones: misses alone. multiget looks up --batch random\n"
       "keys per Store::MultiGet call (ops and us/op per key, latencies per batch);\n"
       "LMDB has no batched read and runs readrandom in its place.\n\n"
       "readseq and readreverse scan the whole pool in key order and backward (LevelDB's;\n"
       "LMDB: MDB_NEXT from MDB_FIRST, MDB_PREV from MDB_LAST). seekrandom (RocksDB's)\n"
       "seeks to a random key and reads --seek_nexts entries after it, through one\n"
       "iterator a thread keeps; with --reverse it seeks for the last key <= the random\n"
       "one (SeekForPrev; LMDB: MDB_SET_RANGE, then MDB_PREV) and reads backward.\n\n"
       "readwhilewriting (db_bench's): --threads threads look up random keys while one\n"
       "more thread puts random keys (durable with --sync) until the readers finish;\n"
       "the readers' row comes first, then the writer's (readwhilewriting.writer). It\n"
       "shows what a writer's fence or msync costs the readers. Fill the pool first,\n"
       "e.g. in a run of its own with --nosync.\n\n"
       "updaterandom (RocksDB db_bench's read-modify-write) looks up a random key and\n"
       "puts a new value of --value-size under it: one operation, a Get and a Put,\n"
       "durable per update with --sync as the other writes. Like readrandom it reads\n"
       "the pool as it is, so fill it first: after fillseq every key is updated; after\n"
       "fillrandom 63% are there, and misses are inserts that later updates find\n"
       "(about 77% found at --num updates; a note says so). --transactions\n"
       "makes each update a transaction (BeginTransaction, Get, Put, Commit), begun\n"
       "again when Commit returns Aborted; the row counts those aborts. LMDB does each\n"
       "update in one write transaction (mdb_txn_begin, mdb_get, mdb_put,\n"
       "mdb_txn_commit) with or without --transactions: it has no write outside one,\n"
       "so for LMDB both forms are the same work. With --threads=N, thread t updates\n"
       "only keys k with k % N == t: no two threads touch one key, so no commit should\n"
       "abort; ops/s is all threads' together (LMDB runs its write transactions one at\n"
       "a time).\n\n"
       "reopenreadonly closes the pool and opens it again read-only (Options::read_only;\n"
       "LMDB: MDB_RDONLY): the read benchmarks after it read through that open, and a\n"
       "write benchmark after it fails (PermissionDenied) unless it is a fill, which\n"
       "starts a new pool. Its row is the open's time; the rows after it are named\n"
       "NAME.readonly (readrandom.readonly), beside the writable open's NAME.\n\n"
       "Without --size the pool (and LMDB's map) is sized to fit --num keys of\n"
       "--value-size with room for overwrites, at least 1 GiB; the bench refuses to\n"
       "start when the file system lacks the room.\n\n"
       "Examples:\n  PMEM2_FORCE_GRANULARITY=CACHE_LINE pmstore bench /dev/shm/pool --compare=lmdb\n"
       "  pmstore bench /dev/shm/pool --benchmarks=fillseq,readrandom,multiget,readmissing --compare=lmdb\n"
       "  pmstore bench /dev/shm/pool --benchmarks=fillseq,readrandom,reopenreadonly,readrandom\n"
       "  pmstore bench /dev/shm/pool --benchmarks=fillrandom --value-size=1536K --num=1000\n"
       "  pmstore bench /ext4/pool --benchmarks=fillseq --nosync --num=200000\n"
       "  pmstore bench /ext4/pool --benchmarks=readwhilewriting --num=200000 --reads=20000000 --threads=2\n"
       "  pmstore bench /dev/shm/pool --benchmarks=fillseq,readseq,readreverse,seekrandom --seek_nexts=10 --reverse\n"
       "  pmstore bench /mnt/huge/pool --num=1000000 --benchmarks=fillrandom,updaterandom --transactions"
       " --compare=lmdb\n\n"
       "Exit status: 0, 2 error.",
       {"size", "benchmarks", "num", "reads", "batch", "seek_nexts", "reverse", "key_size", "value_size", "threads",
        "sync", "transactions", "output_format", "compare", "lmdb_first", "exclusive"}},
      {"version", "version", "Print the library version.", "", {}},
  };
  return kSubcommands;
}

int Usage(const std::string& message) {
  std::fprintf(stderr, "pmstore: %s\n", message.c_str());
  return 2;
}

bool ParseSizeFlag(const std::string& text, uint64_t fallback, uint64_t* out) {
  if (text.empty()) {
    *out = fallback;
    return true;
  }
  auto size = pmstore::base::ParseSize(text);
  if (!size.ok()) return false;
  *out = *size;
  return true;
}

// --size and --max-size of a pool that create or load makes (0: unset).
bool ParseNewPoolSizes(uint64_t* size, uint64_t* max_size) {
  return ParseSizeFlag(absl::GetFlag(FLAGS_size), 0, size) && ParseSizeFlag(absl::GetFlag(FLAGS_max_size), 0, max_size);
}

// --mode: octal permission bits, 0 to 0777 ("640" or "0640").
bool ParseModeFlag(uint32_t* mode) {
  const std::string text = absl::GetFlag(FLAGS_mode);
  if (text.empty() || text.size() > 4 || text.find_first_not_of("01234567") != std::string::npos) return false;
  *mode = static_cast<uint32_t>(std::stoul(text, nullptr, 8));
  return *mode <= 0777;
}

int Dispatch(const std::string& command, const std::vector<std::string>& args) {
  namespace cli = pmstore::cli;
  auto need = [&](size_t min, size_t max) { return args.size() >= min && args.size() <= max; };
  const std::string usage = "wrong arguments for '" + command + "' (see 'pmstore help " + command + "')";
  const bool exclusive = absl::GetFlag(FLAGS_exclusive);
  if (command == "version") {
    std::printf("%s\n", std::string(pmstore::Version()).c_str());
    return 0;
  }
  if (command == "create") {
    if (!need(1, 1)) return Usage(usage);
    cli::CreateConfig config{args[0], 0, 0};
    config.force = absl::GetFlag(FLAGS_force);
    if (!ParseNewPoolSizes(&config.size, &config.max_size)) return Usage("bad size (use e.g. 64M, 1G)");
    if (!ParseModeFlag(&config.mode)) return Usage("--mode is octal permission bits, 0 to 0777 (e.g. 0640)");
    const bool device = cli::IsCharacterDevice(config.pool);
    if (device && (config.size != 0 || config.max_size != 0)) {
      return Usage(config.pool + " is a device: the pool's size is the device's (drop --size and --max-size)");
    }
    if (!device && absl::GetFlag(FLAGS_size).empty()) return Usage("create needs --size");
    return cli::Create(config);
  }
  if (command == "destroy") return need(1, 1) ? cli::Destroy(args[0]) : Usage(usage);
  if (command == "put") {
    if (!need(2, 3)) return Usage(usage);
    cli::PutConfig config{
        args[0], args[1], args.size() == 3, args.size() == 3 ? args[2] : "", absl::GetFlag(FLAGS_file), exclusive};
    if (config.have_value && !config.file.empty()) return Usage("give VALUE or --file, not both");
    return cli::Put(config);
  }
  if (command == "get") return need(2, 2) ? cli::Get(args[0], args[1], exclusive) : Usage(usage);
  if (command == "del") return need(2, 2) ? cli::Del(args[0], args[1], exclusive) : Usage(usage);
  if (command == "list") {
    if (!need(1, 1)) return Usage(usage);
    return cli::List(
        {args[0], absl::GetFlag(FLAGS_prefix), absl::GetFlag(FLAGS_limit), absl::GetFlag(FLAGS_reverse), exclusive});
  }
  if (command == "stats") {
    return need(1, 1) ? cli::PrintStats(args[0], absl::GetFlag(FLAGS_json), exclusive) : Usage(usage);
  }
  if (command == "check") return need(1, 1) ? cli::Check(args[0], absl::GetFlag(FLAGS_json)) : Usage(usage);
  if (command == "readers") {
    return need(1, 1) ? cli::Readers(args[0], absl::GetFlag(FLAGS_clear_stale), absl::GetFlag(FLAGS_json))
                      : Usage(usage);
  }
  if (command == "dump") {
    if (!need(1, 1)) return Usage(usage);
    return cli::Dump({args[0], absl::GetFlag(FLAGS_print), absl::GetFlag(FLAGS_file), exclusive});
  }
  if (command == "load") {
    if (!need(1, 1)) return Usage(usage);
    cli::LoadConfig config{args[0], absl::GetFlag(FLAGS_file), 0, 0};
    if (!ParseNewPoolSizes(&config.size, &config.max_size)) return Usage("bad size (use e.g. 64M, 1G)");
    if (!ParseModeFlag(&config.mode)) return Usage("--mode is octal permission bits, 0 to 0777 (e.g. 0640)");
    config.exclusive = exclusive;
    return cli::Load(config);
  }
  if (command == "copy") {
    if (!need(2, 2)) return Usage(usage);
    return cli::Copy({args[0], args[1], absl::GetFlag(FLAGS_json), absl::GetFlag(FLAGS_progress), exclusive});
  }
  if (command == "bench") {
    if (!need(1, 1)) return Usage(usage);
    cli::BenchConfig config;
    config.pool = args[0];
    if (!ParseSizeFlag(absl::GetFlag(FLAGS_size), 0, &config.size)) return Usage("bad --size");
    config.benchmarks = absl::StrSplit(absl::GetFlag(FLAGS_benchmarks), ',', absl::SkipEmpty());
    for (const std::string& name : config.benchmarks) {
      if (absl::c_find(cli::kBenchmarkNames, name) == std::end(cli::kBenchmarkNames)) {
        return Usage("unknown benchmark '" + name + "' (see --help for the list)");
      }
    }
    config.num = absl::GetFlag(FLAGS_num);
    config.reads = absl::GetFlag(FLAGS_reads);
    config.key_size = absl::GetFlag(FLAGS_key_size);
    uint64_t value_size = 0;
    if (!ParseSizeFlag(absl::GetFlag(FLAGS_value_size), 100, &value_size) || value_size > cli::kMaxBenchValueSize) {
      return Usage("--value-size is 0 to 4M (4194304 bytes), not '" + absl::GetFlag(FLAGS_value_size) + "'");
    }
    config.value_size = static_cast<int>(value_size);
    config.batch = absl::GetFlag(FLAGS_batch);
    config.seek_nexts = absl::GetFlag(FLAGS_seek_nexts);
    config.reverse = absl::GetFlag(FLAGS_reverse);
    config.threads = absl::GetFlag(FLAGS_threads);
    config.sync = absl::GetFlag(FLAGS_sync);
    config.transactions = absl::GetFlag(FLAGS_transactions);
    config.compare = absl::GetFlag(FLAGS_compare);
    config.compare_first = absl::GetFlag(FLAGS_lmdb_first);
    config.exclusive = exclusive;
    if (config.compare_first && config.compare.empty()) return Usage("--lmdb-first needs --compare=lmdb");
    const std::string format = absl::GetFlag(FLAGS_output_format);
    if (format != "normal" && format != "json") return Usage("--output-format is normal or json");
    config.json = format == "json";
    if (config.num == 0 || config.threads < 1 || config.key_size < 1 || config.batch < 1) {
      return Usage("--num, --threads, --key-size and --batch must be positive");
    }
    if (config.seek_nexts < 0) return Usage("--seek_nexts must be 0 or more");
    return cli::RunBench(config);
  }
  return Usage("unknown subcommand '" + command + "'");
}

}  // namespace

int main(int argc, char** argv) {
  return pmstore::base::RunMain(argc, argv, "pmstore",
                                "pmstore: a crash-consistent key/object store on persistent memory.", Subcommands(),
                                Dispatch);
}
