// libmosquitto, as Debian's libmosquitto-dev installs it: the MQTT client of `locus stream`.
#ifndef LOCUS_CMOSQUITTO_SHIM_H
#define LOCUS_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#endif
