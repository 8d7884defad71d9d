# SPDX-License-Identifier: BSD-3-Clause
# Writes (MODE=write) or checks (MODE=check) docs/ENV.md from the env table.
#   cmake -DOSH_INFO=... -DDOC=docs/ENV.md -DMODE=write|check -P env_doc.cmake
execute_process(COMMAND ${OSH_INFO} --env-markdown OUTPUT_VARIABLE table RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "osh_info --env-markdown failed")
endif()
set(text "# Environment variables\n\n<!-- Generated from src/core/env.def by `make env-doc`; do not edit. -->\n\nEvery variable is read once, at `shmem_init`, as `SHMEM_<NAME>` or its\nSandia/Open MPI alias `SMA_<NAME>` (the `SHMEM_` spelling wins). A malformed\nvalue stops `shmem_init` with a message naming the variable. `SHMEM_INFO=1`\nprints this table with the values in force; `osh_info` prints it without\nstarting a job.\n\nlibfabric's own variables still apply (`FI_PROVIDER`, `FI_TCP_IFACE`, ...);\n`SHMEM_OFI_PROVIDER` takes precedence over `FI_PROVIDER` for the choice of provider.\n\n${table}")
if(MODE STREQUAL "write")
  file(WRITE ${DOC} "${text}")
else()
  file(READ ${DOC} current)
  if(NOT current STREQUAL text)
    message(FATAL_ERROR "docs/ENV.md is out of date: run `make env-doc` and commit it")
  endif()
endif()
