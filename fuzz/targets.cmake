# Every libFuzzer target: one line each, huc_fuzz_target(NAME SOURCE LIBS...). NAME is also the
# seed corpus (fuzz/corpus/NAME/, and the files fuzz/CMakeLists.txt gives it from the build) and,
# if present, the dictionary (fuzz/dict/NAME.dict).
# Included by fuzz/CMakeLists.txt twice over: in the clang fuzz build to build them, in the
# main build to register their ctest runs (label `fuzz`).
huc_fuzz_target(config config_fuzz.cpp hucprof_cli)
huc_fuzz_target(command_line command_line_fuzz.cpp hucprof_cli)
huc_fuzz_target(duration duration_fuzz.cpp hucprof_core)
huc_fuzz_target(kallsyms kallsyms_fuzz.cpp hucprof_core)
huc_fuzz_target(cpu_list cpu_list_fuzz.cpp hucprof_core)
huc_fuzz_target(kernel_params kernel_params_fuzz.cpp hucprof_core)
huc_fuzz_target(listen_address listen_address_fuzz.cpp hucprof_core)
huc_fuzz_target(web_config web_config_fuzz.cpp hucprof_web_input)
huc_fuzz_target(http_request http_request_fuzz.cpp hucprof_web_input hucprof_export)
huc_fuzz_target(http_body http_body_fuzz.cpp hucprof_web_input)
huc_fuzz_target(log_line log_line_fuzz.cpp hucprof_log)
huc_fuzz_target(profile_reader profile_reader_fuzz.cpp hucprof_export)
huc_fuzz_target(debug_file debug_file_fuzz.cpp hucprof_debuginfo)
huc_fuzz_target(workload workload_fuzz.cpp hucprof_core)
huc_fuzz_target(download_watch download_watch_fuzz.cpp hucprof_core)
huc_fuzz_target(compressed_size compressed_size_fuzz.cpp hucprof_core)
huc_fuzz_target(metrics_page metrics_page_fuzz.cpp hucprof_core)
huc_fuzz_target(metrics_url metrics_url_fuzz.cpp hucprof_core)
