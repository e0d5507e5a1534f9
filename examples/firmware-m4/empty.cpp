// The baseline for size reports: the same startup code, no Blur.
#include <stdlib.h>

int main() { exit(0); }
