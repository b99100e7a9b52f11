"""What every plane shares: errors, configuration, records, the vault's paths, the engine (the only kuzu import), tokens, secrets, safe reads, signing, the export, children."""
