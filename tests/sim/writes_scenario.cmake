# Writes seed 26 (broadcast, no fence: it fails) out as a scenario and compares it with the file
# kept in tests/core/testdata: the writer and the replay must stay in step.
execute_process(COMMAND ${SIM} --seed 26 --mode broadcast --no-fence --write-scenario ${OUT} RESULT_VARIABLE rc)
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${EXPECTED} RESULT_VARIABLE differs)
if(differs)
  message(FATAL_ERROR "baton_sim --write-scenario no longer writes ${EXPECTED}: compare ${OUT}")
endif()
