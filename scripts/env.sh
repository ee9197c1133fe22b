# Sourced by the scripts: puts the toolchain on PATH and moves to the project root.
export PATH="/opt/swift/usr/bin:$PATH"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
