#include <criterion/criterion.h>
Test(dummy, dummy) { cr_assert(1); }
