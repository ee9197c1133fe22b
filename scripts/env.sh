# Sourced by the scripts: puts the toolchain on PATH and moves to the project root.
export PATH="/opt/swift/usr/bin:$PATH"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# The build scripts/install installs `locus` from (and bench-replay measures, the process users run):
# release, the Swift runtime and Foundation linked statically, so that start-up does not bind the
# toolchain's shared libraries' symbols (~7 ms of each run's ~17 ms start-up on the bench machine).
install_build_flags=(-c release --static-swift-stdlib --scratch-path .build-install)
# The release build the benchmarks and the instruction check run: `swift build -c release`, or with
# LOCUS_RELEASE_BUILD=install the install's build above (scripts/test sets it, so that CI compiles the
# package in release once instead of twice: about 4 minutes on 2 cores). `release_bin` prints the
# directory of its products.
if [ "${LOCUS_RELEASE_BUILD:-}" = install ]; then release_build_flags=("${install_build_flags[@]}"); else release_build_flags=(-c release); fi
release_bin() { swift build "${release_build_flags[@]}" --show-bin-path; }
# Builds one product of that release build, showing only its errors and warnings (not the linker's
# note that mktemp is dangerous, which the static Swift runtime brings along).
release_build() { swift build "${release_build_flags[@]}" --product "$1" 2>&1 | grep -E "error|warning:" | grep -v "mktemp. is dangerous" >&2 || true; }
