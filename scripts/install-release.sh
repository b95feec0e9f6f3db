#!/usr/bin/env bash
# Installs a released sitegen binary: downloads the archive that `dist` built
# for this machine, checks it against its .sha256, and puts `sitegen` in a
# folder. Used by action.yml; runs on Linux, macOS and Windows (Git Bash).
#
#   install-release.sh RELEASES_URL VERSION DEST
#     RELEASES_URL  e.g. https://github.com/OWNER/sitegen/releases
#     VERSION       a release tag (v0.1.0), or "latest"
#     DEST          folder to put the binary in (created)
#   install-release.sh --archives   lists every archive name it may download
#   install-release.sh --archive    names the archive for this machine
#
# Prints the installed binary's path on its last line.
set -euo pipefail

# The release archive for an OS and processor (uname -s, uname -m). Linux
# takes the static musl build, which runs on any distribution.
archive_for() {
  case "$1-$2" in
    Linux-x86_64 | Linux-amd64) echo sitegen-x86_64-unknown-linux-musl.tar.xz ;;
    Linux-aarch64 | Linux-arm64) echo sitegen-aarch64-unknown-linux-musl.tar.xz ;;
    Darwin-arm64 | Darwin-aarch64) echo sitegen-aarch64-apple-darwin.tar.xz ;;
    Darwin-x86_64) echo sitegen-x86_64-apple-darwin.tar.xz ;;
    MINGW*-x86_64 | MSYS*-x86_64 | CYGWIN*-x86_64) echo sitegen-x86_64-pc-windows-msvc.zip ;;
    *) return 1 ;;
  esac
}

if [ "${1:-}" = "--archives" ]; then
  for system in Linux-x86_64 Linux-aarch64 Darwin-arm64 Darwin-x86_64 MINGW64_NT-x86_64; do
    archive_for "${system%-*}" "${system##*-}"
  done
  exit 0
fi

if [ "${1:-}" = "--archive" ]; then
  archive_for "$(uname -s)" "$(uname -m)"
  exit
fi

if [ $# -ne 3 ]; then
  echo "usage: install-release.sh RELEASES_URL VERSION DEST" >&2
  exit 2
fi
releases="${1%/}" version="$2" dest="$3"

os="$(uname -s)" arch="$(uname -m)"
archive="$(archive_for "$os" "$arch")" || {
  echo "error: sitegen has no release binary for $os $arch; build it from source: cargo install --locked --git ${releases%/releases}" >&2
  exit 1
}
case "$version" in
  latest) url="$releases/latest/download" ;;
  v[0-9]*) url="$releases/download/$version" ;;
  *)
    echo "error: version: expected a release tag like v0.1.0 or \"latest\", found \"$version\"" >&2
    exit 1
    ;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Only HTTPS, but for a test's release server on this machine.
proto='=https'
case "$releases" in http://127.0.0.1:* | http://localhost:*) proto='=http' ;; esac
fetch() { curl --proto "$proto" --proto-redir '=https' --fail --silent --show-error --location --retry 3 -o "$2" "$1"; }
fetch "$url/$archive" "$work/$archive" || {
  echo "error: cannot download $url/$archive (is $version a sitegen release?)" >&2
  exit 1
}
fetch "$url/$archive.sha256" "$work/$archive.sha256" || {
  echo "error: cannot download $url/$archive.sha256" >&2
  exit 1
}

# dist writes "<hex> *<name>"; the first word is the digest.
expected="$(cut -d ' ' -f 1 <"$work/$archive.sha256" | tr -d '\r')"
if command -v sha256sum >/dev/null; then
  actual="$(sha256sum "$work/$archive" | cut -d ' ' -f 1)"
else
  actual="$(shasum -a 256 "$work/$archive" | cut -d ' ' -f 1)"
fi
if [ "$expected" != "$actual" ]; then
  echo "error: $archive: sha256 is $actual, the release says $expected; not installed" >&2
  exit 1
fi

mkdir -p "$work/x" "$dest"
case "$archive" in
  *.zip) unzip -q "$work/$archive" -d "$work/x" ;;
  *) tar -xJf "$work/$archive" -C "$work/x" ;;
esac
# The tar archives hold sitegen-<target>/sitegen, the zip sitegen.exe at its root.
binary="$(find "$work/x" -type f \( -name sitegen -o -name sitegen.exe \) | head -n 1)"
if [ -z "$binary" ]; then
  echo "error: $archive holds no sitegen binary" >&2
  exit 1
fi
installed="$dest/$(basename "$binary")"
cp "$binary" "$installed"
chmod +x "$installed"
echo "$installed"
