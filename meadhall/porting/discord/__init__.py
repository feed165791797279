"""`meadhall import-discord` (docs/migrating.md): DiscordChatExporter JSON exports into one guild.

reader.py finds the files and streams them; scan.py reads every file once, keeps what the structure needs
(channels, people, roles, custom emojis) and spills the messages to a temporary file sorted by time; content.py
rewrites a message's text; media.py confines attachment paths to the export; importer.py writes it all through
the batch writer (porting/writer.py) in one transaction.
"""
