/** Reads an engine's TOML configuration (the {@code [lsm]} tables) into {@code EngineOptions}. */
package io.shale.engine.config;
