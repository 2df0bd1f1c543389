// Version and provenance of this build (generated at build time by cmake/write_version.cmake).
#pragma once

#include <string_view>

namespace blockres {
const char* version_string();
// Short commit id of the source tree, with "-dirty" when the tree differs from it ("unknown"
// without git or a provenance stamp).
const char* git_commit();
// SHA-256 (hex) of the tree's diff against that commit, "" for an unmodified tree.
const char* git_diff_sha256();
// The diff itself (git diff --binary HEAD plus untracked files); empty for an unmodified tree or
// a diff too large to embed (over 8 MB: only its hash is kept).
std::string_view git_diff();
}  // namespace blockres
