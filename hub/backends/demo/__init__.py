"""The demo homes: one in memory, one as simulated MQTT devices."""
