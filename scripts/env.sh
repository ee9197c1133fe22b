# Sourced by the scripts: puts the toolchain on PATH and moves to the project root.
export PATH="/opt/swift/usr/bin:$PATH"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# The build scripts/install installs `locus` from (and bench-replay measures, the process users run):
# release, the Swift runtime and Foundation linked statically, so that start-up does not bind the
# toolchain's shared libraries' symbols (~7 ms of each run's ~17 ms start-up on the bench machine).
install_build_flags=(-c release --static-swift-stdlib --scratch-path .build-install)
