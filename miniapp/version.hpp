// Version and git commit of this build (generated at build time by cmake/write_version.cmake).
#pragma once

namespace blockres {
const char* version_string();
const char* git_commit();
}  // namespace blockres
