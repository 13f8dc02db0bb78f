# Harness of the docs/PACKAGING.md "Use it" snippet (docs/SNIPPETS.md): a consumer project
# with the three targets it names (app, viewer, tool), configured (not built) against the
# build tree's package: an unknown imported target fails the generate step.
cmake_minimum_required(VERSION 3.25)
project(docs_consumer C CXX)
set(CMAKE_CXX_STANDARD 20)
file(WRITE ${CMAKE_BINARY_DIR}/main.cc "int main() { return 0; }\n")
file(WRITE ${CMAKE_BINARY_DIR}/main.c "int main(void) { return 0; }\n")
add_executable(app ${CMAKE_BINARY_DIR}/main.cc)
add_executable(viewer ${CMAKE_BINARY_DIR}/main.cc)
add_executable(tool ${CMAKE_BINARY_DIR}/main.c)
# @snippet
