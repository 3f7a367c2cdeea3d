/* Stand-in for CUDA's cuda_runtime.h in the emulation build (HEXCG_CUDA=EMU):
 * the emulation runtime's declarations (../hxemu.h). Test-only. */
#include "../hxemu.h"
