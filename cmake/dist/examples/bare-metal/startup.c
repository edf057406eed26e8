/*
 * Minimal Cortex-M4 startup for the example (MPS2 AN386 under QEMU, or any
 * Cortex-M whose flash is at 0 and RAM at 0x20000000: see link.ld): the
 * vector table, Reset_Handler (.data copied, .bss zeroed, main, exit) and a
 * fault handler that says so.
 */
#include <stdint.h>

#include "example_port.h"

extern uint32_t __data_start__[], __data_end__[], __data_load__[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __stack_top__[];

int main(void);
void Reset_Handler(void);
void Fault_Handler(void);

typedef void (*vector_t)(void);

__attribute__((section(".vectors"), used)) static const vector_t vectors[16] = {
    (vector_t)(uintptr_t)__stack_top__, /* initial SP */
    Reset_Handler,
    Fault_Handler, /* NMI */
    Fault_Handler, /* HardFault */
    Fault_Handler, /* MemManage */
    Fault_Handler, /* BusFault */
    Fault_Handler, /* UsageFault */
    0,
    0,
    0,
    0,
    Fault_Handler, /* SVCall */
    Fault_Handler, /* DebugMon */
    0,
    Fault_Handler, /* PendSV */
    Fault_Handler, /* SysTick */
};

void Reset_Handler(void) {
    for (uint32_t *src = __data_load__, *dst = __data_start__;
         dst < __data_end__;) {
        *dst++ = *src++;
    }
    for (uint32_t *dst = __bss_start__; dst < __bss_end__;) {
        *dst++ = 0;
    }
    example_exit(main());
}

void Fault_Handler(void) {
    console_write("example: FAULT\n");
    example_exit(3);
}
