# Fails if the linked image defines or references a heap symbol.
execute_process(COMMAND ${NM} -C ${ELF} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} ${ELF} failed")
endif()
# Demangled operator new/delete, and the C allocator entry points.
set(found "")
foreach(pattern " (malloc|free|calloc|realloc|_sbrk|sbrk|_malloc_r|_free_r|__malloc_lock)\n"
                " operator new" " operator delete")
  string(REGEX MATCHALL "[^\n]*${pattern}" hits "${symbols}")
  list(APPEND found ${hits})
endforeach()
if(found)
  string(REPLACE ";" "\n" found "${found}")
  message(FATAL_ERROR "heap symbols in ${ELF}:\n${found}")
endif()
string(REGEX MATCHALL "\n" lines "${symbols}")
list(LENGTH lines count)
message("no heap symbols among ${count} symbols of ${ELF}")
