# The table of bootable Debian kernels, from Packages-format stanzas.
# Input: files of stanzas, each preceded by an assignment suite=NAME and
# rank=N (N: the suite's place in KERNEL_SUITES, higher = newer).
# Output (mode=lines): one line per kernel version, oldest first, "|"-separated:
#   version  package  suite  size_bytes  series  missing  also
# where missing names the parts the mirror lacks (empty: bootable) and also
# lists the other packages of the same kernel version, "suite:package" with
# commas, best first.
# Output (mode=candidates): one line per package of every suite, in the same
# order, each kernel version's best package last, "|"-separated:
#   package  version  suite  size_bytes  missing  parts
# where parts is "package=version=suite=size" for each .deb, with commas, the
# image itself first.
#
# What counts: amd64 linux-image-VER-amd64 (and its -unsigned twin); the
# -rt-, -cloud- and -dbg flavours are left out. A 7.x-style image is an empty
# package whose kernel is in linux-binary-VER, its modules in
# linux-modules-VER and its config in linux-base-VER: all three are parts,
# and its size is their sum. A package is one kernel version with its twins
# (the +deb12 and +deb13 builds of one version, the -unsigned twin): the
# newest suite's, signed, highest Debian version is the one listed. One
# version: the same Debian version once the suffix of a rebuild for an older
# release is dropped (6.12.117-1~deb12u1 is trixie's 6.12.117-1 built for
# bookworm; 6.12.43-1~bpo12+1 is a backport of 6.12.43-1), so that
# 6.1.192-1, -2 and -3 (three ABIs: 6.1.0-55, -56, -57) stay three kernels.

BEGIN { RS = ""; FS = "\n"; for (i = 1; i < 256; i++) ORD[sprintf("%c", i)] = i }

$1 !~ /^Package: linux-(image|binary|modules|base)-/ { next }   # the other 60,000 packages of a suite

{
  pkg = ""; ver = ""; arch = ""; size = 0; deps = ""
  for (i = 1; i <= NF; i++) {
    if ($i ~ /^Package: /) pkg = substr($i, 10)
    else if ($i ~ /^Version: /) ver = substr($i, 10)
    else if ($i ~ /^Architecture: /) arch = substr($i, 15)
    else if ($i ~ /^Size: /) size = substr($i, 7) + 0
    else if ($i ~ /^Depends: /) deps = substr($i, 10)
  }
  if (pkg !~ /^linux-(image|binary|modules|base)-/ || arch != "amd64") next
  SIZE[pkg, ver, suite] = size
  SUITES_OF[pkg, ver] = SUITES_OF[pkg, ver] " " suite
  # linux-image-6.1.0-57-amd64, linux-image-6.12.90+deb12.1-amd64, not the
  # metapackages (linux-image-amd64, linux-image-6.12-amd64).
  if (pkg !~ /^linux-image-[0-9]+\.[0-9]+(\.[0-9]+)?(-[0-9]+|\+[a-z0-9.]+)-amd64(-unsigned)?$/) next
  n++
  C_PKG[n] = pkg; C_VER[n] = ver; C_SUITE[n] = suite; C_RANK[n] = rank
  C_DEPS[n] = deps
}

END {
  for (c = 1; c <= n; c++) resolve_parts(c)
  # Order: upstream version, then preference (the best of a version last).
  for (c = 1; c <= n; c++) ORDER[c] = c
  for (i = 2; i <= n; i++) {
    x = ORDER[i]
    for (j = i - 1; j >= 1 && before(x, ORDER[j]); j--) ORDER[j + 1] = ORDER[j]
    ORDER[j + 1] = x
  }
  if (mode == "candidates") {
    for (i = 1; i <= n; i++) {
      c = ORDER[i]
      print C_PKG[c] "|" C_VER[c] "|" C_SUITE[c] "|" C_SIZE[c] "|" C_MISSING[c] "|" C_PARTS[c]
    }
    exit
  }
  for (i = 1; i <= n; i++) {
    c = ORDER[i]
    if (i < n && kernel(C_VER[ORDER[i + 1]]) == kernel(C_VER[c])) continue   # not the best of its version
    also = ""
    for (j = i - 1; j >= 1 && kernel(C_VER[ORDER[j]]) == kernel(C_VER[c]); j--) {
      o = ORDER[j]
      if (C_PKG[o] == C_PKG[c] && C_SUITE[o] == C_SUITE[c]) continue
      also = also (also == "" ? "" : ",") C_SUITE[o] ":" C_PKG[o]
    }
    split(upstream(C_VER[c]), f, ".")
    print C_VER[c] "|" C_PKG[c] "|" C_SUITE[c] "|" C_SIZE[c] "|" f[1] "." f[2] "|" C_MISSING[c] "|" also
  }
}

# The .debs that make up candidate c, and which of them no suite has.
function resolve_parts(c,    d, k, m, name, v, s) {
  C_PARTS[c] = C_PKG[c] "=" C_VER[c] "=" C_SUITE[c] "=" SIZE[C_PKG[c], C_VER[c], C_SUITE[c]]
  C_SIZE[c] = SIZE[C_PKG[c], C_VER[c], C_SUITE[c]]
  C_MISSING[c] = ""
  # linux-base-VER is a part only of a split image (it holds the config
  # there); a whole image's linux-base-VER holds documentation alone.
  split_image = (C_DEPS[c] ~ /(^|, )linux-binary-/)
  m = split(C_DEPS[c], d, /, /)
  for (k = 1; k <= m; k++) {
    if (d[k] !~ /^linux-(binary|modules|base)-[^ ]+ \(= [^)]+\)$/) continue
    name = d[k]; sub(/ .*/, "", name)
    v = d[k]; sub(/^[^(]*\(= /, "", v); sub(/\)$/, "", v)
    if (name ~ /^linux-base-/ && !split_image) continue
    s = C_SUITE[c]
    if (!((name, v, s) in SIZE)) { s = SUITES_OF[name, v]; sub(/^ /, "", s); sub(/ .*/, "", s) }
    if (s == "") { C_MISSING[c] = C_MISSING[c] (C_MISSING[c] == "" ? "" : ",") name; continue }
    C_PARTS[c] = C_PARTS[c] "," name "=" v "=" s "=" SIZE[name, v, s]
    C_SIZE[c] += SIZE[name, v, s]
  }
}

# Whether candidate a sorts before candidate b: by kernel version, then
# the worse first (incomplete, older suite, unsigned, lower Debian version).
function before(a, b,    r) {
  r = debcmp(kernel(C_VER[a]), kernel(C_VER[b]))
  if (r != 0) return r < 0
  if ((C_MISSING[a] == "") != (C_MISSING[b] == "")) return C_MISSING[a] != ""
  if (C_RANK[a] != C_RANK[b]) return C_RANK[a] < C_RANK[b]
  if ((C_PKG[a] ~ /-unsigned$/) != (C_PKG[b] ~ /-unsigned$/)) return C_PKG[a] ~ /-unsigned$/
  r = debcmp(C_VER[a], C_VER[b])
  if (r != 0) return r < 0
  return C_PKG[a] < C_PKG[b]
}

# The kernel a Debian version stands for: the version without the suffix
# of a backport (~bpo12+1) or of a stable update for an older release
# (~deb12u1, +deb12u1).
function kernel(v) {
  sub(/(~bpo[0-9]+\+[0-9]+|[~+]deb[0-9]+u[0-9]+)$/, "", v)
  return v
}

# The upstream part of a Debian version: no epoch, no Debian revision.
function upstream(v) {
  sub(/^[0-9]+:/, "", v)
  if (v ~ /-/) sub(/-[^-]*$/, "", v)
  return v
}

# dpkg's ordering of two Debian versions (epoch:upstream-revision): <0, 0, >0.
function debcmp(a, b,    ea, eb, ra, rb, r) {
  ea = 0; eb = 0
  if (a ~ /^[0-9]+:/) { ea = a; sub(/:.*/, "", ea); sub(/^[0-9]+:/, "", a) }
  if (b ~ /^[0-9]+:/) { eb = b; sub(/:.*/, "", eb); sub(/^[0-9]+:/, "", b) }
  if (ea + 0 != eb + 0) return ea - eb
  ra = ""; rb = ""
  if (a ~ /-/) { ra = a; sub(/^.*-/, "", ra); sub(/-[^-]*$/, "", a) }
  if (b ~ /-/) { rb = b; sub(/^.*-/, "", rb); sub(/-[^-]*$/, "", b) }
  r = vercmp(a, b)
  return r != 0 ? r : vercmp(ra, rb)
}

# dpkg's verrevcmp: non-digit runs compared character by character with
# '~' before everything (even the end) and letters before other characters;
# digit runs compared as numbers.
function vercmp(a, b,    ca, cb, da, db) {
  while (a != "" || b != "") {
    while ((a != "" && substr(a, 1, 1) !~ /[0-9]/) || (b != "" && substr(b, 1, 1) !~ /[0-9]/)) {
      ca = charorder(substr(a, 1, 1)); cb = charorder(substr(b, 1, 1))
      if (ca != cb) return ca - cb
      a = substr(a, 2); b = substr(b, 2)
    }
    match(a, /^[0-9]*/); da = substr(a, 1, RLENGTH); a = substr(a, RLENGTH + 1)
    match(b, /^[0-9]*/); db = substr(b, 1, RLENGTH); b = substr(b, RLENGTH + 1)
    sub(/^0+/, "", da); sub(/^0+/, "", db)
    if (length(da) != length(db)) return length(da) - length(db)
    if (da != db) return da < db ? -1 : 1
  }
  return 0
}

function charorder(ch) {
  if (ch == "") return 0
  if (ch == "~") return -1
  if (ch ~ /[A-Za-z]/) return ORD[ch]
  return ORD[ch] + 256
}
