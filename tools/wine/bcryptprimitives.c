/* bcryptprimitives.dll for Wine < 9, test machines only.
 *
 * Rust's standard library (1.78 and later) draws its random numbers from ProcessPrng in
 * bcryptprimitives.dll, which every Windows 10 and 11 has but Debian 12's Wine 8 lacks: without
 * it no Rust program starts there. This stand-in answers ProcessPrng from RtlGenRandom
 * (advapi32's SystemFunction036). It is built and installed into the Wine prefix by
 * `./build-wheels --wine-tests`; it never ships in a wheel.
 */
#include <windows.h>

BOOLEAN NTAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
