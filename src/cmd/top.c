int kerf_cmd_top(int argc, char **argv);
int kerf_cmd_top(int argc, char **argv) { (void)argc; (void)argv; return 1; }
