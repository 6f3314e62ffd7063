#include <cstdio>
int main() { std::puts("causeway: under construction"); return 0; }
