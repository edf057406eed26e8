/*
 * ctxc configuration overlay for the Cortex-M4 board mps2-an386 (runs under
 * qemu-system-arm -M mps2-an386; see project.yml targets.cortex-m4).
 *
 * Picked up through ctxc_config_defaults.h (the board folder is on the include
 * path of the library and of the firmware linked with it, so they agree).
 * The arena sizes and limits keep the project defaults from project.yml,
 * which are sized for an MCU; override them here, per board, when the RAM
 * budget of an application is known. Sizes in bytes unless stated.
 */
#ifndef CTXC_BOARD_MPS2_AN386_CONFIG_H
#define CTXC_BOARD_MPS2_AN386_CONFIG_H

/* Error message text kept in ctxc_error_t: shorter than the default to save
 * RAM in every error struct on the stack; 96 bytes still name the field. */
#define CTXC_CFG_ERROR_MESSAGE_LEN 96

#endif /* CTXC_BOARD_MPS2_AN386_CONFIG_H */
