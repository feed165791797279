-- revision 0001_initial
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL,
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
CREATE TABLE IF NOT EXISTS audit_log (
	id BIGINT NOT NULL,
	action VARCHAR(64) NOT NULL,
	guild_id BIGINT,
	actor_id BIGINT,
	target_type VARCHAR(32),
	target_id BIGINT,
	reason TEXT,
	data JSON NOT NULL,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_audit_log PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS ix_audit_log_guild_id_id ON audit_log (guild_id, id);
CREATE INDEX IF NOT EXISTS ix_audit_log_action_id ON audit_log (action, id);
CREATE TABLE IF NOT EXISTS instance_settings (
	id INTEGER NOT NULL,
	data JSON NOT NULL,
	updated_at DATETIME NOT NULL,
	CONSTRAINT pk_instance_settings PRIMARY KEY (id)
);
INSERT INTO alembic_version (version_num) VALUES ('0001_initial') RETURNING version_num;

-- revision 0002_drop_identity_links
DROP TABLE IF EXISTS user_identity_links;
UPDATE alembic_version SET version_num='0002_drop_identity_links' WHERE alembic_version.version_num = '0001_initial';

-- revision 0003_accounts
CREATE TABLE IF NOT EXISTS users (
	id BIGINT NOT NULL,
	username VARCHAR(32) NOT NULL,
	username_norm VARCHAR(64) NOT NULL,
	email_enc BLOB NOT NULL,
	email_index VARCHAR(64) NOT NULL,
	password_hash VARCHAR(255) NOT NULL,
	display_name VARCHAR(64) NOT NULL,
	display_name_norm VARCHAR(128) NOT NULL,
	bio TEXT NOT NULL,
	status VARCHAR(16) NOT NULL,
	custom_status VARCHAR(256),
	custom_status_emoji VARCHAR(128),
	locale VARCHAR(16) NOT NULL,
	timezone VARCHAR(64) NOT NULL,
	avatar_file_id BIGINT,
	totp_enabled BOOLEAN NOT NULL,
	totp_secret_enc BLOB,
	totp_last_step BIGINT,
	totp_pending_enc BLOB,
	totp_pending_expires_at DATETIME,
	onboarding_completed_at DATETIME,
	is_instance_admin BOOLEAN NOT NULL,
	password_reset_required BOOLEAN NOT NULL,
	last_seen_at DATETIME NOT NULL,
	created_at DATETIME NOT NULL,
	banned_at DATETIME,
	ban_reason TEXT,
	banned_by BIGINT,
	deleted_at DATETIME,
	CONSTRAINT pk_users PRIMARY KEY (id),
	CONSTRAINT uq_users_username_norm UNIQUE (username_norm),
	CONSTRAINT uq_users_email_index UNIQUE (email_index)
);
CREATE TABLE IF NOT EXISTS sessions (
	id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	token_hash VARCHAR(64) NOT NULL,
	token_created_at DATETIME NOT NULL,
	prev_token_hash VARCHAR(64),
	prev_valid_until DATETIME,
	created_at DATETIME NOT NULL,
	last_used_at DATETIME NOT NULL,
	ip VARCHAR(64) NOT NULL,
	user_agent VARCHAR(512),
	method VARCHAR(16) NOT NULL,
	step_up_expires_at DATETIME,
	CONSTRAINT pk_sessions PRIMARY KEY (id),
	CONSTRAINT uq_sessions_token_hash UNIQUE (token_hash),
	CONSTRAINT fk_sessions_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_sessions_user_id ON sessions (user_id);
CREATE INDEX IF NOT EXISTS ix_sessions_prev_token_hash ON sessions (prev_token_hash);
CREATE TABLE IF NOT EXISTS backup_codes (
	id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	code_hash VARCHAR(255) NOT NULL,
	used_at DATETIME,
	CONSTRAINT pk_backup_codes PRIMARY KEY (id),
	CONSTRAINT fk_backup_codes_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_backup_codes_user_id ON backup_codes (user_id);
CREATE TABLE IF NOT EXISTS security_events (
	id BIGINT NOT NULL,
	user_id BIGINT,
	type VARCHAR(48) NOT NULL,
	ip VARCHAR(64) NOT NULL,
	user_agent VARCHAR(512),
	data JSON NOT NULL,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_security_events PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS ix_security_events_user_id_id ON security_events (user_id, id);
UPDATE alembic_version SET version_num='0003_accounts' WHERE alembic_version.version_num = '0002_drop_identity_links';

-- revision 0004_guilds
CREATE TABLE IF NOT EXISTS guilds (
	id BIGINT NOT NULL,
	name VARCHAR(100) NOT NULL,
	name_norm VARCHAR(200) NOT NULL,
	description TEXT,
	icon_file_id BIGINT,
	banner_file_id BIGINT,
	splash_file_id BIGINT,
	owner_id BIGINT NOT NULL,
	member_count INTEGER NOT NULL,
	system_channel_id BIGINT,
	public BOOLEAN NOT NULL,
	public_invite_code VARCHAR(16),
	is_main BOOLEAN NOT NULL,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_guilds PRIMARY KEY (id),
	CONSTRAINT fk_guilds_owner_id_users FOREIGN KEY(owner_id) REFERENCES users (id)
);
CREATE INDEX IF NOT EXISTS ix_guilds_owner_id ON guilds (owner_id);
CREATE TABLE IF NOT EXISTS channels (
	id BIGINT NOT NULL,
	guild_id BIGINT,
	type VARCHAR(16) NOT NULL,
	name VARCHAR(100),
	topic TEXT,
	position INTEGER NOT NULL,
	parent_id BIGINT,
	slowmode_seconds INTEGER NOT NULL,
	user_limit INTEGER,
	background_file_id BIGINT,
	icon_file_id BIGINT,
	dm_owner_id BIGINT,
	last_message_id BIGINT,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_channels PRIMARY KEY (id),
	CONSTRAINT fk_channels_guild_id_guilds FOREIGN KEY(guild_id) REFERENCES guilds (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_channels_guild_id ON channels (guild_id);
CREATE TABLE IF NOT EXISTS guild_bans (
	guild_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	reason TEXT,
	author_id BIGINT,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_guild_bans PRIMARY KEY (guild_id, user_id),
	CONSTRAINT fk_guild_bans_guild_id_guilds FOREIGN KEY(guild_id) REFERENCES guilds (id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS members (
	guild_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	nick VARCHAR(64),
	nick_norm VARCHAR(128),
	joined_at DATETIME NOT NULL,
	timeout_until DATETIME,
	CONSTRAINT pk_members PRIMARY KEY (guild_id, user_id),
	CONSTRAINT fk_members_guild_id_guilds FOREIGN KEY(guild_id) REFERENCES guilds (id) ON DELETE CASCADE,
	CONSTRAINT fk_members_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_members_user_id ON members (user_id);
CREATE TABLE IF NOT EXISTS roles (
	id BIGINT NOT NULL,
	guild_id BIGINT NOT NULL,
	name VARCHAR(100) NOT NULL,
	color INTEGER NOT NULL,
	position INTEGER NOT NULL,
	permissions BIGINT NOT NULL,
	hoist BOOLEAN NOT NULL,
	frame_id BIGINT,
	icon_id BIGINT,
	is_default BOOLEAN NOT NULL,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_roles PRIMARY KEY (id),
	CONSTRAINT fk_roles_guild_id_guilds FOREIGN KEY(guild_id) REFERENCES guilds (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_roles_guild_id_position ON roles (guild_id, position);
CREATE TABLE IF NOT EXISTS templates (
	id BIGINT NOT NULL,
	owner_id BIGINT NOT NULL,
	name VARCHAR(100) NOT NULL,
	description TEXT,
	source_guild_id BIGINT,
	structure JSON NOT NULL,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_templates PRIMARY KEY (id),
	CONSTRAINT fk_templates_owner_id_users FOREIGN KEY(owner_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT fk_templates_source_guild_id_guilds FOREIGN KEY(source_guild_id) REFERENCES guilds (id) ON DELETE SET NULL
);
CREATE INDEX IF NOT EXISTS ix_templates_owner_id ON templates (owner_id);
CREATE TABLE IF NOT EXISTS invites (
	code VARCHAR(16) NOT NULL,
	guild_id BIGINT NOT NULL,
	channel_id BIGINT NOT NULL,
	inviter_id BIGINT,
	max_age_seconds INTEGER NOT NULL,
	max_uses INTEGER NOT NULL,
	uses INTEGER NOT NULL,
	expires_at DATETIME,
	is_public BOOLEAN NOT NULL,
	background_file_id BIGINT,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_invites PRIMARY KEY (code),
	CONSTRAINT fk_invites_channel_id_channels FOREIGN KEY(channel_id) REFERENCES channels (id) ON DELETE CASCADE,
	CONSTRAINT fk_invites_guild_id_guilds FOREIGN KEY(guild_id) REFERENCES guilds (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_invites_guild_id ON invites (guild_id);
CREATE TABLE IF NOT EXISTS member_roles (
	guild_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	role_id BIGINT NOT NULL,
	CONSTRAINT pk_member_roles PRIMARY KEY (guild_id, user_id, role_id),
	CONSTRAINT fk_member_roles_guild_id_members FOREIGN KEY(guild_id, user_id) REFERENCES members (guild_id, user_id) ON DELETE CASCADE,
	CONSTRAINT fk_member_roles_role_id_roles FOREIGN KEY(role_id) REFERENCES roles (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_member_roles_role_id ON member_roles (role_id);
CREATE TABLE IF NOT EXISTS permission_overrides (
	channel_id BIGINT NOT NULL,
	target_id BIGINT NOT NULL,
	kind VARCHAR(8) NOT NULL,
	allow BIGINT NOT NULL,
	deny BIGINT NOT NULL,
	CONSTRAINT pk_permission_overrides PRIMARY KEY (channel_id, target_id),
	CONSTRAINT fk_permission_overrides_channel_id_channels FOREIGN KEY(channel_id) REFERENCES channels (id) ON DELETE CASCADE
);
UPDATE alembic_version SET version_num='0004_guilds' WHERE alembic_version.version_num = '0003_accounts';

-- revision 0005_messages
CREATE TABLE IF NOT EXISTS messages (
	id BIGINT NOT NULL,
	channel_id BIGINT NOT NULL,
	guild_id BIGINT,
	author_id BIGINT,
	webhook_id BIGINT,
	webhook_name VARCHAR(80),
	webhook_avatar VARCHAR(2048),
	content TEXT NOT NULL,
	content_norm TEXT NOT NULL,
	kind VARCHAR(16) NOT NULL,
	recipient_id BIGINT,
	system_event JSON,
	nonce VARCHAR(64),
	reply_to_id BIGINT,
	mentions JSON NOT NULL,
	mention_channels JSON NOT NULL,
	mention_everyone BOOLEAN NOT NULL,
	suppress_embeds BOOLEAN NOT NULL,
	pinned BOOLEAN NOT NULL,
	pinned_at DATETIME,
	created_at DATETIME NOT NULL,
	edited_at DATETIME,
	CONSTRAINT pk_messages PRIMARY KEY (id),
	CONSTRAINT fk_messages_channel_id_channels FOREIGN KEY(channel_id) REFERENCES channels (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_messages_channel_id_id ON messages (channel_id, id);
CREATE TABLE IF NOT EXISTS read_states (
	user_id BIGINT NOT NULL,
	channel_id BIGINT NOT NULL,
	last_read_message_id BIGINT,
	mention_count INTEGER NOT NULL,
	updated_at DATETIME NOT NULL,
	CONSTRAINT pk_read_states PRIMARY KEY (user_id, channel_id),
	CONSTRAINT fk_read_states_channel_id_channels FOREIGN KEY(channel_id) REFERENCES channels (id) ON DELETE CASCADE,
	CONSTRAINT fk_read_states_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS reactions (
	message_id BIGINT NOT NULL,
	emoji VARCHAR(100) NOT NULL,
	user_id BIGINT NOT NULL,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_reactions PRIMARY KEY (message_id, emoji, user_id),
	CONSTRAINT fk_reactions_message_id_messages FOREIGN KEY(message_id) REFERENCES messages (id) ON DELETE CASCADE
);
UPDATE alembic_version SET version_num='0005_messages' WHERE alembic_version.version_num = '0004_guilds';

-- revision 0006_message_search
CREATE VIRTUAL TABLE IF NOT EXISTS messages_search USING fts5(content_norm, content='messages', content_rowid='id', tokenize='trigram case_sensitive 1', columnsize=0);
CREATE TRIGGER IF NOT EXISTS messages_search_insert AFTER INSERT ON messages BEGIN INSERT INTO messages_search(rowid, content_norm) VALUES (new.id, new.content_norm); END;
CREATE TRIGGER IF NOT EXISTS messages_search_delete AFTER DELETE ON messages BEGIN INSERT INTO messages_search(messages_search, rowid, content_norm) VALUES ('delete', old.id, old.content_norm); END;
CREATE TRIGGER IF NOT EXISTS messages_search_update AFTER UPDATE OF content_norm ON messages WHEN old.content_norm IS NOT new.content_norm BEGIN INSERT INTO messages_search(messages_search, rowid, content_norm) VALUES ('delete', old.id, old.content_norm); INSERT INTO messages_search(rowid, content_norm) VALUES (new.id, new.content_norm); END;
INSERT INTO messages_search(messages_search) VALUES ('rebuild');
UPDATE alembic_version SET version_num='0006_message_search' WHERE alembic_version.version_num = '0005_messages';

-- revision 0007_guild_perm_version
ALTER TABLE guilds ADD COLUMN perm_version BIGINT DEFAULT '0' NOT NULL;
CREATE TRIGGER IF NOT EXISTS pv_members_insert AFTER INSERT ON members BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = NEW.guild_id; END;
CREATE TRIGGER IF NOT EXISTS pv_members_update AFTER UPDATE ON members BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = NEW.guild_id; END;
CREATE TRIGGER IF NOT EXISTS pv_members_delete AFTER DELETE ON members BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = OLD.guild_id; END;
CREATE TRIGGER IF NOT EXISTS pv_member_roles_insert AFTER INSERT ON member_roles BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = NEW.guild_id; END;
CREATE TRIGGER IF NOT EXISTS pv_member_roles_update AFTER UPDATE ON member_roles BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = NEW.guild_id; END;
CREATE TRIGGER IF NOT EXISTS pv_member_roles_delete AFTER DELETE ON member_roles BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = OLD.guild_id; END;
CREATE TRIGGER IF NOT EXISTS pv_roles_insert AFTER INSERT ON roles BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = NEW.guild_id; END;
CREATE TRIGGER IF NOT EXISTS pv_roles_update AFTER UPDATE ON roles BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = NEW.guild_id; END;
CREATE TRIGGER IF NOT EXISTS pv_roles_delete AFTER DELETE ON roles BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = OLD.guild_id; END;
CREATE TRIGGER IF NOT EXISTS pv_channels_insert AFTER INSERT ON channels BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = NEW.guild_id; END;
CREATE TRIGGER IF NOT EXISTS pv_channels_delete AFTER DELETE ON channels BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = OLD.guild_id; END;
CREATE TRIGGER IF NOT EXISTS pv_permission_overrides_insert AFTER INSERT ON permission_overrides BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = (SELECT guild_id FROM channels WHERE id = NEW.channel_id); END;
CREATE TRIGGER IF NOT EXISTS pv_permission_overrides_update AFTER UPDATE ON permission_overrides BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = (SELECT guild_id FROM channels WHERE id = NEW.channel_id); END;
CREATE TRIGGER IF NOT EXISTS pv_permission_overrides_delete AFTER DELETE ON permission_overrides BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = (SELECT guild_id FROM channels WHERE id = OLD.channel_id); END;
CREATE TRIGGER IF NOT EXISTS pv_guilds_owner AFTER UPDATE OF owner_id ON guilds WHEN NEW.owner_id IS NOT OLD.owner_id BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id = NEW.id; END;
CREATE TRIGGER IF NOT EXISTS pv_users_admin AFTER UPDATE OF is_instance_admin ON users WHEN NEW.is_instance_admin IS NOT OLD.is_instance_admin BEGIN UPDATE guilds SET perm_version = perm_version + 1 WHERE id IN (SELECT guild_id FROM members WHERE user_id = NEW.id); END;
UPDATE alembic_version SET version_num='0007_guild_perm_version' WHERE alembic_version.version_num = '0006_message_search';

-- revision 0008_files
CREATE TABLE IF NOT EXISTS files (
	id BIGINT NOT NULL,
	purpose VARCHAR(16) NOT NULL,
	uploader_id BIGINT,
	original_name VARCHAR(255) NOT NULL,
	content_type VARCHAR(255) NOT NULL,
	size BIGINT NOT NULL,
	sha256 VARCHAR(64) NOT NULL,
	meta JSON NOT NULL,
	guild_id BIGINT,
	channel_id BIGINT,
	message_id BIGINT,
	position INTEGER,
	owner VARCHAR(32),
	owner_id BIGINT,
	owner_key VARCHAR(32),
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_files PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS ix_files_message_id ON files (message_id);
CREATE INDEX IF NOT EXISTS ix_files_guild_id ON files (guild_id);
CREATE INDEX IF NOT EXISTS ix_files_channel_id ON files (channel_id);
CREATE INDEX IF NOT EXISTS ix_files_owner_created_at ON files (owner, created_at);
UPDATE alembic_version SET version_num='0008_files' WHERE alembic_version.version_num = '0007_guild_perm_version';

-- revision 0009_auth_epoch
CREATE TABLE IF NOT EXISTS auth_epoch (
	id INTEGER NOT NULL,
	value BIGINT NOT NULL,
	CONSTRAINT pk_auth_epoch PRIMARY KEY (id)
);
CREATE TRIGGER IF NOT EXISTS ae_sessions_delete AFTER DELETE ON sessions FOR EACH ROW BEGIN INSERT INTO auth_epoch (id, value) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET value = auth_epoch.value + 1; END;
CREATE TRIGGER IF NOT EXISTS ae_sessions_update AFTER UPDATE OF token_hash, prev_token_hash, prev_valid_until, step_up_expires_at, user_id ON sessions FOR EACH ROW BEGIN INSERT INTO auth_epoch (id, value) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET value = auth_epoch.value + 1; END;
CREATE TRIGGER IF NOT EXISTS ae_users_delete AFTER DELETE ON users FOR EACH ROW BEGIN INSERT INTO auth_epoch (id, value) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET value = auth_epoch.value + 1; END;
CREATE TRIGGER IF NOT EXISTS ae_users_update AFTER UPDATE OF is_instance_admin, banned_at, deleted_at ON users FOR EACH ROW BEGIN INSERT INTO auth_epoch (id, value) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET value = auth_epoch.value + 1; END;
UPDATE alembic_version SET version_num='0009_auth_epoch' WHERE alembic_version.version_num = '0008_files';

-- revision 0010_message_flags
ALTER TABLE messages ADD COLUMN reacted BOOLEAN DEFAULT 0 NOT NULL;
ALTER TABLE messages ADD COLUMN has_attachments BOOLEAN DEFAULT 0 NOT NULL;
ALTER TABLE channels ADD COLUMN message_version BIGINT DEFAULT '0' NOT NULL;
ALTER TABLE channels ADD COLUMN has_private BOOLEAN DEFAULT 0 NOT NULL;
UPDATE channels SET has_private = true WHERE id IN (SELECT channel_id FROM messages WHERE kind = 'private');
UPDATE messages SET reacted = true WHERE id IN (SELECT message_id FROM reactions);
UPDATE messages SET has_attachments = true WHERE id IN (SELECT message_id FROM files WHERE message_id IS NOT NULL);
CREATE TRIGGER IF NOT EXISTS mf_reactions_insert AFTER INSERT ON reactions FOR EACH ROW WHEN NEW.message_id IS NOT NULL BEGIN UPDATE messages SET reacted = true WHERE id = NEW.message_id AND NOT reacted; END;
CREATE TRIGGER IF NOT EXISTS mf_files_insert AFTER INSERT ON files FOR EACH ROW WHEN NEW.message_id IS NOT NULL BEGIN UPDATE messages SET has_attachments = true WHERE id = NEW.message_id AND NOT has_attachments; END;
CREATE TRIGGER IF NOT EXISTS mf_files_bind AFTER UPDATE OF message_id ON files FOR EACH ROW WHEN NEW.message_id IS NOT NULL BEGIN UPDATE messages SET has_attachments = true WHERE id = NEW.message_id AND NOT has_attachments; END;
CREATE TRIGGER IF NOT EXISTS mv_messages_insert AFTER INSERT ON messages FOR EACH ROW BEGIN UPDATE channels SET message_version = message_version + 1, has_private = CASE WHEN NEW.kind = 'private' THEN true ELSE has_private END, last_message_id = CASE WHEN NEW.kind <> 'private' AND (last_message_id IS NULL OR NEW.id > last_message_id) THEN NEW.id ELSE last_message_id END WHERE id = NEW.channel_id; END;
CREATE TRIGGER IF NOT EXISTS mv_messages_update AFTER UPDATE ON messages FOR EACH ROW BEGIN UPDATE channels SET message_version = message_version + 1 WHERE id = NEW.channel_id; END;
CREATE TRIGGER IF NOT EXISTS mv_messages_delete AFTER DELETE ON messages FOR EACH ROW BEGIN UPDATE channels SET message_version = message_version + 1 WHERE id = OLD.channel_id; END;
UPDATE alembic_version SET version_num='0010_message_flags' WHERE alembic_version.version_num = '0009_auth_epoch';

-- revision 0011_social
ALTER TABLE channels ADD COLUMN is_group BOOLEAN DEFAULT 0 NOT NULL;
ALTER TABLE channels ADD COLUMN dm_pair VARCHAR(48);
CREATE INDEX IF NOT EXISTS ix_channels_dm_pair ON channels (dm_pair);
CREATE TABLE IF NOT EXISTS relationships (
	user_id BIGINT NOT NULL,
	other_id BIGINT NOT NULL,
	type VARCHAR(16) NOT NULL,
	since DATETIME NOT NULL,
	CONSTRAINT pk_relationships PRIMARY KEY (user_id, other_id),
	CONSTRAINT fk_relationships_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT fk_relationships_other_id_users FOREIGN KEY(other_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_relationships_other_id ON relationships (other_id);
CREATE TABLE IF NOT EXISTS dm_participants (
	channel_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	joined_at DATETIME NOT NULL,
	CONSTRAINT pk_dm_participants PRIMARY KEY (channel_id, user_id),
	CONSTRAINT fk_dm_participants_channel_id_channels FOREIGN KEY(channel_id) REFERENCES channels (id) ON DELETE CASCADE,
	CONSTRAINT fk_dm_participants_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_dm_participants_user_id ON dm_participants (user_id);
CREATE TABLE IF NOT EXISTS calls (
	id BIGINT NOT NULL,
	channel_id BIGINT NOT NULL,
	initiator_id BIGINT NOT NULL,
	status VARCHAR(16) NOT NULL,
	media VARCHAR(8) NOT NULL,
	ongoing_channel_id BIGINT,
	created_at DATETIME NOT NULL,
	started_at DATETIME,
	ended_at DATETIME,
	end_reason VARCHAR(32),
	CONSTRAINT pk_calls PRIMARY KEY (id),
	CONSTRAINT fk_calls_channel_id_channels FOREIGN KEY(channel_id) REFERENCES channels (id) ON DELETE CASCADE,
	CONSTRAINT uq_calls_ongoing_channel_id UNIQUE (ongoing_channel_id)
);
CREATE INDEX IF NOT EXISTS ix_calls_channel_id_id ON calls (channel_id, id);
CREATE TABLE IF NOT EXISTS call_participants (
	call_id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	state VARCHAR(16) NOT NULL,
	microphone BOOLEAN NOT NULL,
	camera BOOLEAN NOT NULL,
	screen BOOLEAN NOT NULL,
	joined_at DATETIME,
	left_at DATETIME,
	CONSTRAINT pk_call_participants PRIMARY KEY (call_id, user_id),
	CONSTRAINT fk_call_participants_call_id_calls FOREIGN KEY(call_id) REFERENCES calls (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_call_participants_user_id ON call_participants (user_id);
UPDATE alembic_version SET version_num='0011_social' WHERE alembic_version.version_num = '0010_message_flags';

-- revision 0012_customisation
CREATE TABLE IF NOT EXISTS emojis (
	id BIGINT NOT NULL,
	guild_id BIGINT NOT NULL,
	name VARCHAR(32) NOT NULL,
	name_norm VARCHAR(32) NOT NULL,
	file_id BIGINT NOT NULL,
	animated BOOLEAN NOT NULL,
	creator_id BIGINT,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_emojis PRIMARY KEY (id),
	CONSTRAINT fk_emojis_guild_id_guilds FOREIGN KEY(guild_id) REFERENCES guilds (id) ON DELETE CASCADE,
	CONSTRAINT uq_emojis_guild_id_name_norm UNIQUE (guild_id, name_norm)
);
CREATE TABLE IF NOT EXISTS sounds (
	id BIGINT NOT NULL,
	guild_id BIGINT NOT NULL,
	kind VARCHAR(16) NOT NULL,
	name VARCHAR(32) NOT NULL,
	name_norm VARCHAR(32) NOT NULL,
	emoji VARCHAR(64),
	palette_event VARCHAR(16),
	file_id BIGINT NOT NULL,
	duration_ms INTEGER,
	creator_id BIGINT,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_sounds PRIMARY KEY (id),
	CONSTRAINT fk_sounds_guild_id_guilds FOREIGN KEY(guild_id) REFERENCES guilds (id) ON DELETE CASCADE,
	CONSTRAINT uq_sounds_guild_id_kind_name_norm UNIQUE (guild_id, kind, name_norm),
	CONSTRAINT uq_sounds_guild_id_palette_event UNIQUE (guild_id, palette_event)
);
CREATE TABLE IF NOT EXISTS cosmetics (
	id BIGINT NOT NULL,
	guild_id BIGINT NOT NULL,
	kind VARCHAR(8) NOT NULL,
	name VARCHAR(32) NOT NULL,
	file_id BIGINT NOT NULL,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_cosmetics PRIMARY KEY (id),
	CONSTRAINT fk_cosmetics_guild_id_guilds FOREIGN KEY(guild_id) REFERENCES guilds (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_cosmetics_guild_id ON cosmetics (guild_id);
CREATE TABLE IF NOT EXISTS user_styles (
	user_id BIGINT NOT NULL,
	scope_key BIGINT NOT NULL,
	guild_id BIGINT,
	frame_id BIGINT,
	icon_id BIGINT,
	color INTEGER,
	updated_at DATETIME NOT NULL,
	CONSTRAINT pk_user_styles PRIMARY KEY (user_id, scope_key),
	CONSTRAINT fk_user_styles_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT fk_user_styles_guild_id_guilds FOREIGN KEY(guild_id) REFERENCES guilds (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_user_styles_guild_id ON user_styles (guild_id);
UPDATE alembic_version SET version_num='0012_customisation' WHERE alembic_version.version_num = '0011_social';

-- revision 0013_voice
CREATE TABLE IF NOT EXISTS media_webhook_events (
	id VARCHAR(128) NOT NULL,
	event VARCHAR(64) NOT NULL,
	room VARCHAR(128),
	received_at DATETIME NOT NULL,
	CONSTRAINT pk_media_webhook_events PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS ix_media_webhook_events_received_at ON media_webhook_events (received_at);
UPDATE alembic_version SET version_num='0013_voice' WHERE alembic_version.version_num = '0012_customisation';

-- revision 0014_outbound
CREATE TABLE IF NOT EXISTS link_previews (
	url_hash VARCHAR(64) NOT NULL,
	url TEXT NOT NULL,
	status VARCHAR(16) NOT NULL,
	card JSON,
	fetched_at DATETIME NOT NULL,
	expires_at DATETIME NOT NULL,
	CONSTRAINT pk_link_previews PRIMARY KEY (url_hash)
);
CREATE INDEX IF NOT EXISTS ix_link_previews_expires_at ON link_previews (expires_at);
CREATE TABLE IF NOT EXISTS push_subscriptions (
	id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	endpoint VARCHAR(2048) NOT NULL,
	p256dh VARCHAR(128) NOT NULL,
	auth VARCHAR(64) NOT NULL,
	created_at DATETIME NOT NULL,
	failure_count INTEGER NOT NULL,
	last_delivery_at DATETIME,
	CONSTRAINT pk_push_subscriptions PRIMARY KEY (id),
	CONSTRAINT fk_push_subscriptions_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX IF NOT EXISTS uq_push_subscriptions_endpoint ON push_subscriptions (endpoint);
CREATE INDEX IF NOT EXISTS ix_push_subscriptions_user_id ON push_subscriptions (user_id);
UPDATE alembic_version SET version_num='0014_outbound' WHERE alembic_version.version_num = '0013_voice';

-- revision 0015_webhooks
CREATE TABLE IF NOT EXISTS webhooks (
	id BIGINT NOT NULL,
	guild_id BIGINT NOT NULL,
	channel_id BIGINT NOT NULL,
	name VARCHAR(80) NOT NULL,
	avatar_file_id BIGINT,
	creator_id BIGINT NOT NULL,
	token_hash VARCHAR(64) NOT NULL,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_webhooks PRIMARY KEY (id),
	CONSTRAINT fk_webhooks_guild_id_guilds FOREIGN KEY(guild_id) REFERENCES guilds (id) ON DELETE CASCADE,
	CONSTRAINT fk_webhooks_channel_id_channels FOREIGN KEY(channel_id) REFERENCES channels (id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_webhooks_channel_id ON webhooks (channel_id);
CREATE INDEX IF NOT EXISTS ix_webhooks_guild_id ON webhooks (guild_id);
UPDATE alembic_version SET version_num='0015_webhooks' WHERE alembic_version.version_num = '0014_outbound';

-- revision 0016_passkeys
CREATE TABLE IF NOT EXISTS passkeys (
	id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	credential_id VARCHAR(1400) NOT NULL,
	public_key BLOB NOT NULL,
	sign_count BIGINT NOT NULL,
	transports JSON NOT NULL,
	backed_up BOOLEAN NOT NULL,
	name VARCHAR(64) NOT NULL,
	user_handle VARCHAR(128) NOT NULL,
	created_at DATETIME NOT NULL,
	last_used_at DATETIME,
	CONSTRAINT pk_passkeys PRIMARY KEY (id),
	CONSTRAINT fk_passkeys_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT uq_passkeys_credential_id UNIQUE (credential_id)
);
CREATE INDEX IF NOT EXISTS ix_passkeys_user_id ON passkeys (user_id);
UPDATE alembic_version SET version_num='0016_passkeys' WHERE alembic_version.version_num = '0015_webhooks';

-- revision 0017_audit_chain
ALTER TABLE audit_log ADD COLUMN prev_hash VARCHAR(64);
ALTER TABLE audit_log ADD COLUMN hash VARCHAR(64);
CREATE TABLE IF NOT EXISTS audit_chain_heads (
	chain_key VARCHAR(32) NOT NULL,
	last_id BIGINT NOT NULL,
	last_hash VARCHAR(64),
	CONSTRAINT pk_audit_chain_heads PRIMARY KEY (chain_key)
);
CREATE INDEX IF NOT EXISTS ix_audit_log_actor_id_id ON audit_log (actor_id, id);
CREATE INDEX IF NOT EXISTS ix_audit_log_target_id_id ON audit_log (target_id, id);
CREATE INDEX IF NOT EXISTS ix_audit_log_created_at ON audit_log (created_at);
UPDATE alembic_version SET version_num='0017_audit_chain' WHERE alembic_version.version_num = '0016_passkeys';

-- revision 0018_user_search
CREATE VIRTUAL TABLE IF NOT EXISTS users_search USING fts5(username_norm, display_name_norm, content='users', content_rowid='id', tokenize='trigram case_sensitive 1', columnsize=0);
CREATE TRIGGER IF NOT EXISTS users_search_insert AFTER INSERT ON users BEGIN INSERT INTO users_search(rowid, username_norm, display_name_norm) VALUES (new.id, new.username_norm, new.display_name_norm); END;
CREATE TRIGGER IF NOT EXISTS users_search_delete AFTER DELETE ON users BEGIN INSERT INTO users_search(users_search, rowid, username_norm, display_name_norm) VALUES ('delete', old.id, old.username_norm, old.display_name_norm); END;
CREATE TRIGGER IF NOT EXISTS users_search_update AFTER UPDATE OF username_norm, display_name_norm ON users WHEN old.username_norm IS NOT new.username_norm OR old.display_name_norm IS NOT new.display_name_norm BEGIN INSERT INTO users_search(users_search, rowid, username_norm, display_name_norm) VALUES ('delete', old.id, old.username_norm, old.display_name_norm); INSERT INTO users_search(rowid, username_norm, display_name_norm) VALUES (new.id, new.username_norm, new.display_name_norm); END;
INSERT INTO users_search(users_search) VALUES ('rebuild');
UPDATE alembic_version SET version_num='0018_user_search' WHERE alembic_version.version_num = '0017_audit_chain';

-- revision 0019_user_search_short_parts
CREATE INDEX IF NOT EXISTS ix_users_list ON users (id, username_norm, display_name_norm, banned_at);
CREATE TABLE IF NOT EXISTS user_name_grams (gram VARCHAR(2) NOT NULL PRIMARY KEY, users INTEGER NOT NULL) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS user_name_grams_insert AFTER INSERT ON users BEGIN INSERT INTO user_name_grams (gram, users) SELECT gram, 1 FROM (SELECT DISTINCT substr(n.value, p.key + 1, w.value) AS gram FROM json_each(json_array(new.username_norm, new.display_name_norm)) AS n, json_each('[' || rtrim(replace(hex(zeroblob(length(n.value))), '00', '0,'), ',') || ']') AS p, json_each('[1,2]') AS w WHERE p.key + w.value <= length(n.value)) WHERE true ON CONFLICT (gram) DO UPDATE SET users = users + 1; END;
CREATE TRIGGER IF NOT EXISTS user_name_grams_delete AFTER DELETE ON users BEGIN UPDATE user_name_grams SET users = users - 1 WHERE gram IN (SELECT DISTINCT substr(n.value, p.key + 1, w.value) AS gram FROM json_each(json_array(old.username_norm, old.display_name_norm)) AS n, json_each('[' || rtrim(replace(hex(zeroblob(length(n.value))), '00', '0,'), ',') || ']') AS p, json_each('[1,2]') AS w WHERE p.key + w.value <= length(n.value)); END;
CREATE TRIGGER IF NOT EXISTS user_name_grams_update AFTER UPDATE OF username_norm, display_name_norm ON users WHEN old.username_norm IS NOT new.username_norm OR old.display_name_norm IS NOT new.display_name_norm BEGIN INSERT INTO user_name_grams (gram, users) SELECT gram, sum(d) FROM (SELECT gram, -1 AS d FROM (SELECT DISTINCT substr(n.value, p.key + 1, w.value) AS gram FROM json_each(json_array(old.username_norm, old.display_name_norm)) AS n, json_each('[' || rtrim(replace(hex(zeroblob(length(n.value))), '00', '0,'), ',') || ']') AS p, json_each('[1,2]') AS w WHERE p.key + w.value <= length(n.value)) UNION ALL SELECT gram, 1 FROM (SELECT DISTINCT substr(n.value, p.key + 1, w.value) AS gram FROM json_each(json_array(new.username_norm, new.display_name_norm)) AS n, json_each('[' || rtrim(replace(hex(zeroblob(length(n.value))), '00', '0,'), ',') || ']') AS p, json_each('[1,2]') AS w WHERE p.key + w.value <= length(n.value))) GROUP BY gram HAVING sum(d) <> 0 ON CONFLICT (gram) DO UPDATE SET users = users + excluded.users; END;
DELETE FROM user_name_grams;
INSERT INTO user_name_grams (gram, users) SELECT gram, count(*) FROM (SELECT DISTINCT u.id, substr(n.value, p.key + 1, w.value) AS gram FROM users AS u, json_each(json_array(u.username_norm, u.display_name_norm)) AS n, json_each('[' || rtrim(replace(hex(zeroblob(length(n.value))), '00', '0,'), ',') || ']') AS p, json_each('[1,2]') AS w WHERE p.key + w.value <= length(n.value)) GROUP BY gram;
UPDATE alembic_version SET version_num='0019_user_search_short_parts' WHERE alembic_version.version_num = '0018_user_search';

-- revision 0020_room_days
CREATE TABLE IF NOT EXISTS room_days (
	channel_id BIGINT NOT NULL,
	day INTEGER NOT NULL,
	messages INTEGER NOT NULL,
	CONSTRAINT pk_room_days PRIMARY KEY (channel_id, day),
	CONSTRAINT fk_room_days_channel_id_channels FOREIGN KEY(channel_id) REFERENCES channels (id) ON DELETE CASCADE
)
 WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS room_days_insert AFTER INSERT ON messages BEGIN INSERT INTO room_days (channel_id, day, messages) VALUES (NEW.channel_id, (((NEW.id >> 22) + 1704067200000) / 86400000), 1) ON CONFLICT (channel_id, day) DO UPDATE SET messages = room_days.messages + 1; END;
CREATE TRIGGER IF NOT EXISTS room_days_delete AFTER DELETE ON messages BEGIN UPDATE room_days SET messages = messages - 1 WHERE channel_id = OLD.channel_id AND day = (((OLD.id >> 22) + 1704067200000) / 86400000); END;
CREATE TRIGGER IF NOT EXISTS room_days_update AFTER UPDATE OF channel_id, id ON messages WHEN OLD.channel_id <> NEW.channel_id OR OLD.id <> NEW.id BEGIN UPDATE room_days SET messages = messages - 1 WHERE channel_id = OLD.channel_id AND day = (((OLD.id >> 22) + 1704067200000) / 86400000); INSERT INTO room_days (channel_id, day, messages) VALUES (NEW.channel_id, (((NEW.id >> 22) + 1704067200000) / 86400000), 1) ON CONFLICT (channel_id, day) DO UPDATE SET messages = room_days.messages + 1; END;
DELETE FROM room_days;
INSERT INTO room_days (channel_id, day, messages) SELECT m.channel_id, (((m.id >> 22) + 1704067200000) / 86400000) AS d, count(*) FROM messages AS m GROUP BY m.channel_id, d;
CREATE INDEX IF NOT EXISTS ix_users_present_last_seen_at ON users (last_seen_at) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS ix_users_banned ON users (id) WHERE banned_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS ix_users_deleted ON users (id) WHERE deleted_at IS NOT NULL;
UPDATE alembic_version SET version_num='0020_room_days' WHERE alembic_version.version_num = '0019_user_search_short_parts';

-- revision 0021_relationships_by_type
CREATE INDEX IF NOT EXISTS ix_relationships_user_type_other ON relationships (user_id, type, other_id);
UPDATE alembic_version SET version_num='0021_relationships_by_type' WHERE alembic_version.version_num = '0020_room_days';

-- revision 0022_relationship_stamps
CREATE TABLE IF NOT EXISTS relationship_stamps (
	user_id BIGINT NOT NULL,
	stamp BIGINT NOT NULL,
	CONSTRAINT pk_relationship_stamps PRIMARY KEY (user_id),
	CONSTRAINT fk_relationship_stamps_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE TRIGGER IF NOT EXISTS rs_relationships_insert AFTER INSERT ON relationships BEGIN INSERT INTO relationship_stamps (user_id, stamp) SELECT id, random() FROM users WHERE id = NEW.user_id ON CONFLICT (user_id) DO UPDATE SET stamp = excluded.stamp; END;
CREATE TRIGGER IF NOT EXISTS rs_relationships_update AFTER UPDATE ON relationships BEGIN INSERT INTO relationship_stamps (user_id, stamp) SELECT id, random() FROM users WHERE id = NEW.user_id ON CONFLICT (user_id) DO UPDATE SET stamp = excluded.stamp; END;
CREATE TRIGGER IF NOT EXISTS rs_relationships_delete AFTER DELETE ON relationships BEGIN INSERT INTO relationship_stamps (user_id, stamp) SELECT id, random() FROM users WHERE id = OLD.user_id ON CONFLICT (user_id) DO UPDATE SET stamp = excluded.stamp; END;
INSERT INTO relationship_stamps (user_id, stamp) SELECT user_id, random() FROM (SELECT DISTINCT user_id FROM relationships) WHERE true ON CONFLICT (user_id) DO NOTHING;
UPDATE alembic_version SET version_num='0022_relationship_stamps' WHERE alembic_version.version_num = '0021_relationships_by_type';

-- revision 0023_user_style_count
ALTER TABLE users ADD COLUMN style_count INTEGER DEFAULT '0' NOT NULL;
CREATE TRIGGER IF NOT EXISTS sc_user_styles_insert AFTER INSERT ON user_styles BEGIN UPDATE users SET style_count = style_count + 1 WHERE id = NEW.user_id; END;
CREATE TRIGGER IF NOT EXISTS sc_user_styles_delete AFTER DELETE ON user_styles BEGIN UPDATE users SET style_count = style_count - 1 WHERE id = OLD.user_id; END;
CREATE TRIGGER IF NOT EXISTS sc_user_styles_update AFTER UPDATE OF user_id ON user_styles WHEN NEW.user_id IS NOT OLD.user_id BEGIN UPDATE users SET style_count = style_count - 1 WHERE id = OLD.user_id; UPDATE users SET style_count = style_count + 1 WHERE id = NEW.user_id; END;
UPDATE users SET style_count = (SELECT count(*) FROM user_styles WHERE user_styles.user_id = users.id) WHERE id IN (SELECT user_id FROM user_styles);
UPDATE alembic_version SET version_num='0023_user_style_count' WHERE alembic_version.version_num = '0022_relationship_stamps';

-- revision 0024_push_subscription_sessions
DELETE FROM push_subscriptions;
CREATE TABLE _alembic_tmp_push_subscriptions (
	id BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	endpoint VARCHAR(2048) NOT NULL,
	p256dh VARCHAR(128) NOT NULL,
	auth VARCHAR(64) NOT NULL,
	created_at DATETIME NOT NULL,
	failure_count INTEGER NOT NULL,
	last_delivery_at DATETIME,
	session_id BIGINT NOT NULL,
	CONSTRAINT pk_push_subscriptions PRIMARY KEY (id),
	CONSTRAINT fk_push_subscriptions_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT fk_push_subscriptions_session_id_sessions FOREIGN KEY(session_id) REFERENCES sessions (id) ON DELETE CASCADE
);
INSERT INTO _alembic_tmp_push_subscriptions (id, user_id, endpoint, p256dh, auth, created_at, failure_count, last_delivery_at) SELECT push_subscriptions.id, push_subscriptions.user_id, push_subscriptions.endpoint, push_subscriptions.p256dh, push_subscriptions.auth, push_subscriptions.created_at, push_subscriptions.failure_count, push_subscriptions.last_delivery_at
FROM push_subscriptions;
DROP TABLE push_subscriptions;
ALTER TABLE _alembic_tmp_push_subscriptions RENAME TO push_subscriptions;
CREATE INDEX IF NOT EXISTS ix_push_subscriptions_session_id ON push_subscriptions (session_id);
CREATE INDEX ix_push_subscriptions_user_id ON push_subscriptions (user_id);
CREATE UNIQUE INDEX uq_push_subscriptions_endpoint ON push_subscriptions (endpoint);
UPDATE alembic_version SET version_num='0024_push_subscription_sessions' WHERE alembic_version.version_num = '0023_user_style_count';

-- revision 0025_cli_outbox
CREATE TABLE IF NOT EXISTS event_outbox (
	id INTEGER NOT NULL,
	created_at DATETIME NOT NULL,
	body TEXT NOT NULL,
	CONSTRAINT pk_event_outbox PRIMARY KEY (id)
);
UPDATE alembic_version SET version_num='0025_cli_outbox' WHERE alembic_version.version_num = '0024_push_subscription_sessions';

-- revision 0026_mentions
CREATE TABLE IF NOT EXISTS user_mentions (
	user_id BIGINT NOT NULL,
	channel_id BIGINT NOT NULL,
	message_id BIGINT NOT NULL,
	CONSTRAINT pk_user_mentions PRIMARY KEY (user_id, channel_id, message_id),
	CONSTRAINT fk_user_mentions_user_id_users FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE,
	CONSTRAINT fk_user_mentions_message_id_messages FOREIGN KEY(message_id) REFERENCES messages (id) ON DELETE CASCADE
)
 WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ix_user_mentions_message_id ON user_mentions (message_id);
CREATE TABLE IF NOT EXISTS everyone_mentions (
	channel_id BIGINT NOT NULL,
	message_id BIGINT NOT NULL,
	author_id BIGINT,
	CONSTRAINT pk_everyone_mentions PRIMARY KEY (channel_id, message_id),
	CONSTRAINT fk_everyone_mentions_message_id_messages FOREIGN KEY(message_id) REFERENCES messages (id) ON DELETE CASCADE
)
 WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ix_everyone_mentions_message_id ON everyone_mentions (message_id);
UPDATE alembic_version SET version_num='0026_mentions' WHERE alembic_version.version_num = '0025_cli_outbox';

-- revision 0027_audit_keyed_chain
ALTER TABLE audit_chain_heads ADD COLUMN keyed_after BIGINT;
ALTER TABLE audit_chain_heads ADD COLUMN mac VARCHAR(64);
UPDATE alembic_version SET version_num='0027_audit_keyed_chain' WHERE alembic_version.version_num = '0026_mentions';

-- revision 0028_notification_settings
CREATE TABLE IF NOT EXISTS guild_notification_settings (
	user_id BIGINT NOT NULL,
	guild_id BIGINT NOT NULL,
	level VARCHAR(8) NOT NULL,
	muted_until DATETIME,
	suppress_everyone BOOLEAN NOT NULL,
	CONSTRAINT pk_guild_notification_settings PRIMARY KEY (user_id, guild_id),
	CONSTRAINT fk_guild_notification_settings_guild_id_members FOREIGN KEY(guild_id, user_id) REFERENCES members (guild_id, user_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_guild_notification_settings_guild_id_level ON guild_notification_settings (guild_id, level);
CREATE TABLE IF NOT EXISTS room_notification_settings (
	user_id BIGINT NOT NULL,
	channel_id BIGINT NOT NULL,
	guild_id BIGINT,
	conversation_id BIGINT,
	level VARCHAR(8) NOT NULL,
	muted_until DATETIME,
	CONSTRAINT pk_room_notification_settings PRIMARY KEY (user_id, channel_id),
	CONSTRAINT fk_room_notification_settings_channel_id_channels FOREIGN KEY(channel_id) REFERENCES channels (id) ON DELETE CASCADE,
	CONSTRAINT fk_room_notification_settings_guild_id_members FOREIGN KEY(guild_id, user_id) REFERENCES members (guild_id, user_id) ON DELETE CASCADE,
	CONSTRAINT fk_room_notification_settings_conversation_id_dm_participants FOREIGN KEY(conversation_id, user_id) REFERENCES dm_participants (channel_id, user_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_room_notification_settings_channel_id_level ON room_notification_settings (channel_id, level);
UPDATE alembic_version SET version_num='0028_notification_settings' WHERE alembic_version.version_num = '0027_audit_keyed_chain';

-- revision 0029_message_nonces
CREATE TABLE IF NOT EXISTS message_nonces (
	channel_id BIGINT NOT NULL,
	author_id BIGINT NOT NULL,
	nonce VARCHAR(64) NOT NULL,
	message_id BIGINT NOT NULL,
	created_at DATETIME NOT NULL,
	CONSTRAINT pk_message_nonces PRIMARY KEY (channel_id, author_id, nonce)
);
CREATE INDEX IF NOT EXISTS ix_message_nonces_created_at ON message_nonces (created_at);
UPDATE alembic_version SET version_num='0029_message_nonces' WHERE alembic_version.version_num = '0028_notification_settings';

-- revision 0030_push_outbox
CREATE TABLE IF NOT EXISTS push_outbox (
	id BIGINT NOT NULL,
	created_at DATETIME NOT NULL,
	available_at DATETIME NOT NULL,
	claimed_by VARCHAR(32),
	attempts INTEGER NOT NULL,
	body TEXT NOT NULL,
	CONSTRAINT pk_push_outbox PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS ix_push_outbox_available_at ON push_outbox (available_at);
UPDATE alembic_version SET version_num='0030_push_outbox' WHERE alembic_version.version_num = '0029_message_nonces';

-- revision 0031_imports
ALTER TABLE users ADD COLUMN imported BOOLEAN DEFAULT 0 NOT NULL;
CREATE TABLE IF NOT EXISTS import_links (
	guild_id BIGINT NOT NULL,
	kind VARCHAR(16) NOT NULL,
	source_id VARCHAR(64) NOT NULL,
	local_id BIGINT NOT NULL,
	CONSTRAINT pk_import_links PRIMARY KEY (guild_id, kind, source_id),
	CONSTRAINT fk_import_links_guild_id_guilds FOREIGN KEY(guild_id) REFERENCES guilds (id) ON DELETE CASCADE
);
UPDATE alembic_version SET version_num='0031_imports' WHERE alembic_version.version_num = '0030_push_outbox';
