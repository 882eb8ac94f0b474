// The one translation unit that owns doctest's main(). Every other file in tests/core/
// only includes <doctest/doctest.h> and registers its test cases.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
