/* mbedTLS 2.28's default configuration plus the restartable ECC the
 * board's image uses (boards/mps2-an386/net/ctxc_mbedtls_config.h): the
 * host build of the POSIX port for job_sliced (posix_sliced.cmake). */
#define MBEDTLS_ECP_RESTARTABLE
