// output_tail: a user program's stdout and stderr under `sharebench exec` go to one file in the
// cell's private directory (in $TMPDIR), of which the results keep only the end. The file is kept
// to a bounded tail while the program runs, so a program that prints gigabytes does not fill the
// disk and fail for it; and a disk that fills anyway (the program's own files) is named beside the
// program's failure instead of the program being blamed alone.
#pragma once

#include <cstdint>
#include <string>

namespace sharebench {

// The output kept on disk: the last kOutputKeptBytes, give or take what one poll lets a program
// write; the results read far less of it (the stderr tail).
inline constexpr std::int64_t kOutputKeptBytes = 1 << 20;

// Frees the file's blocks before its last `keep` bytes (a hole punched into an append-only file:
// its size, and so every offset, stays as it was). Returns the bytes freed (0 where nothing was
// over, or the file system cannot punch holes).
std::int64_t keep_only_tail(int fd, std::int64_t keep = kOutputKeptBytes);

// "the file system of /tmp/sharebench-1-x (tmpfs, 64 MiB) was full": where the file system that
// holds `fd` has less than a mebibyte left for an unprivileged writer; "" otherwise.
std::string full_disk_of(int fd);

}  // namespace sharebench
