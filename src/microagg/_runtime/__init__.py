"""How microagg runs: numba's decorator and the kernel cache kept sound, the
progress of long runs, the cost model of MDAV's run time, and names loaded on
first access."""
