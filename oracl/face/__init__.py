"""What a person or an agent talks to: the CLI (the only typer import), rendering (the only rich import), the console, MCP, watch and the web view."""
