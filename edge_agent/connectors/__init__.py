"""Plant connectors: MQTT and OPC UA, each turning plant input into records."""
