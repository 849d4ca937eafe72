// An empty program linked with LibTorch (the linker told to keep every library it names): exec'ing
// it measures what spawn cannot avoid, loading and relocating LibTorch. The bound of
// BM_Launch/spawn in launch_bench.cc.
int main() { return 0; }
