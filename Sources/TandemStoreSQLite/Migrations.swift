import TandemSQLite
import TandemStore

/// The SQLite schema, as ordered migrations (PRAGMA user_version).
enum Migrations {
    static let all: [SQLiteMigration] = [
        SQLiteMigration(version: 1, sql: """
        CREATE TABLE containers (
            id TEXT PRIMARY KEY,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE users (
            id INTEGER PRIMARY KEY,
            record_name TEXT NOT NULL UNIQUE,
            email TEXT UNIQUE COLLATE NOCASE,
            given_name TEXT,
            family_name TEXT,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE tokens (
            hash BLOB PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('user', 'api')),
            user_record_name TEXT REFERENCES users(record_name),
            container_id TEXT REFERENCES containers(id),
            created_at INTEGER NOT NULL
        );
        -- AUTOINCREMENT: a recreated zone never gets a deleted zone's key, so change tags and
        -- sync tokens of the old zone can never match the new one.
        CREATE TABLE zones (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            container_id TEXT NOT NULL REFERENCES containers(id),
            environment TEXT NOT NULL,
            database TEXT NOT NULL,
            owner TEXT NOT NULL,
            name TEXT NOT NULL,
            change_seq INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL,
            UNIQUE (container_id, environment, database, owner, name)
        );
        CREATE TABLE records (
            id INTEGER PRIMARY KEY,
            zone_id INTEGER NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            type TEXT NOT NULL,
            change_tag TEXT NOT NULL,
            change_seq INTEGER NOT NULL,
            fields BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            created_by TEXT NOT NULL,
            created_device TEXT NOT NULL DEFAULT '',
            modified_at INTEGER NOT NULL,
            modified_by TEXT NOT NULL,
            modified_device TEXT NOT NULL DEFAULT '',
            parent TEXT,
            share TEXT,
            UNIQUE (zone_id, name)
        );
        CREATE INDEX records_by_type ON records(zone_id, type, id);
        CREATE INDEX records_by_created ON records(zone_id, type, created_at);
        CREATE INDEX records_by_modified ON records(zone_id, type, modified_at);
        -- One row per indexed value: slot 0 = the value (each list member), 2 = a search token
        -- of a string, 3 = a location's longitude (latitude is slot 0), 9 = field present.
        CREATE TABLE field_index (
            record_id INTEGER NOT NULL REFERENCES records(id) ON DELETE CASCADE,
            zone_id INTEGER NOT NULL,
            type TEXT NOT NULL,
            field TEXT NOT NULL,
            slot INTEGER NOT NULL,
            value
        );
        CREATE INDEX field_index_lookup ON field_index(zone_id, type, field, slot, value, record_id);
        CREATE INDEX field_index_record ON field_index(record_id, field, slot);
        CREATE TABLE record_references (
            source_id INTEGER NOT NULL REFERENCES records(id) ON DELETE CASCADE,
            target_zone INTEGER NOT NULL,
            target_name TEXT NOT NULL,
            action TEXT NOT NULL
        );
        CREATE INDEX record_references_target ON record_references(target_zone, target_name);
        CREATE INDEX record_references_source ON record_references(source_id);
        -- The zone change log: every write appends (zone, sequence); tombstones keep the type.
        CREATE TABLE changes (
            zone_id INTEGER NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            record_name TEXT NOT NULL,
            record_type TEXT NOT NULL,
            deleted INTEGER NOT NULL,
            changed_at INTEGER NOT NULL,
            PRIMARY KEY (zone_id, seq)
        ) WITHOUT ROWID;
        CREATE TABLE asset_uploads (
            token TEXT PRIMARY KEY,
            container_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            owner TEXT NOT NULL,
            record_type TEXT NOT NULL,
            field_name TEXT NOT NULL,
            record_name TEXT,
            expires_at INTEGER NOT NULL,
            checksum TEXT,
            size INTEGER
        );
        """),
        // Sharing (issue 3): shares beside their share records, participants other than the owner,
        // access requests, stable URL tokens per root, and each record's share membership so that
        // an access check is one column read (DESIGN.md §4).
        SQLiteMigration(version: 2, sql: """
        ALTER TABLE users ADD COLUMN phone TEXT;
        ALTER TABLE users ADD COLUMN discoverable INTEGER NOT NULL DEFAULT 0;
        CREATE UNIQUE INDEX users_by_phone ON users(phone) WHERE phone IS NOT NULL;
        ALTER TABLE records ADD COLUMN membership TEXT;
        CREATE INDEX records_by_membership ON records(zone_id, membership) WHERE membership IS NOT NULL;
        CREATE INDEX records_by_parent ON records(zone_id, parent) WHERE parent IS NOT NULL;
        -- One token per root ('' for the zone-wide share), kept when the share is deleted so that
        -- sharing the same root again gives the same URL.
        CREATE TABLE share_urls (
            zone_id INTEGER NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
            root_name TEXT NOT NULL,
            short_guid TEXT NOT NULL UNIQUE,
            PRIMARY KEY (zone_id, root_name)
        ) WITHOUT ROWID;
        CREATE TABLE shares (
            id INTEGER PRIMARY KEY,
            zone_id INTEGER NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
            record_name TEXT NOT NULL,
            root_name TEXT,
            short_guid TEXT NOT NULL UNIQUE,
            public_permission TEXT NOT NULL,
            allows_access_requests INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL,
            UNIQUE (zone_id, record_name)
        );
        CREATE TABLE share_participants (
            id INTEGER PRIMARY KEY,
            share_id INTEGER NOT NULL REFERENCES shares(id) ON DELETE CASCADE,
            participant_id TEXT NOT NULL UNIQUE,
            user_record_name TEXT,
            email TEXT COLLATE NOCASE,
            phone TEXT,
            role TEXT NOT NULL,
            permission TEXT NOT NULL,
            status TEXT NOT NULL,
            approved_requester INTEGER NOT NULL DEFAULT 0,
            added_at INTEGER NOT NULL
        );
        CREATE INDEX share_participants_by_share ON share_participants(share_id);
        CREATE INDEX share_participants_by_user ON share_participants(user_record_name, status);
        CREATE INDEX share_participants_by_email ON share_participants(email) WHERE user_record_name IS NULL;
        CREATE INDEX share_participants_by_phone ON share_participants(phone) WHERE user_record_name IS NULL;
        CREATE TABLE share_requesters (
            share_id INTEGER NOT NULL REFERENCES shares(id) ON DELETE CASCADE,
            user_record_name TEXT NOT NULL,
            requested_at INTEGER NOT NULL,
            PRIMARY KEY (share_id, user_record_name)
        ) WITHOUT ROWID;
        CREATE TABLE share_blocked (
            share_id INTEGER NOT NULL REFERENCES shares(id) ON DELETE CASCADE,
            user_record_name TEXT NOT NULL,
            blocked_at INTEGER NOT NULL,
            PRIMARY KEY (share_id, user_record_name)
        ) WITHOUT ROWID;
        """),
        // Sync (issue 4): the change log keeps one row per record (its latest change, tombstones
        // with their type and last share), exits of records from shares for participants'
        // feeds, a purge horizon per zone (retention, D9), and the per-viewer database feed.
        SQLiteMigration(version: 3, sql: """
        CREATE TABLE record_changes (
            zone_id INTEGER NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
            record_name TEXT NOT NULL,
            seq INTEGER NOT NULL,
            record_type TEXT NOT NULL,
            deleted INTEGER NOT NULL,
            membership TEXT,
            changed_at INTEGER NOT NULL,
            PRIMARY KEY (zone_id, record_name)
        ) WITHOUT ROWID;
        INSERT INTO record_changes (zone_id, record_name, seq, record_type, deleted, membership, changed_at)
            SELECT c.zone_id, c.record_name, MAX(c.seq), c.record_type, c.deleted, r.membership, c.changed_at
            FROM changes c LEFT JOIN records r ON r.zone_id = c.zone_id AND r.name = c.record_name
            GROUP BY c.zone_id, c.record_name;
        DROP TABLE changes;
        CREATE INDEX record_changes_by_seq ON record_changes(zone_id, seq);
        CREATE INDEX record_changes_by_membership ON record_changes(zone_id, membership, seq) WHERE membership IS NOT NULL;
        -- A record leaving a share: participants of that share see it as deleted.
        CREATE TABLE share_exits (
            zone_id INTEGER NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
            share TEXT NOT NULL,
            record_name TEXT NOT NULL,
            record_type TEXT NOT NULL,
            seq INTEGER NOT NULL,
            changed_at INTEGER NOT NULL,
            PRIMARY KEY (zone_id, share, record_name)
        ) WITHOUT ROWID;
        CREATE INDEX share_exits_by_seq ON share_exits(zone_id, share, seq);
        ALTER TABLE zones ADD COLUMN purged_seq INTEGER NOT NULL DEFAULT 0;
        -- The feed clock tick of the zone's latest change: database feeds are read from it
        -- (one update per write, whatever the number of participants).
        ALTER TABLE zones ADD COLUMN feed_seq INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX zones_by_feed ON zones(container_id, environment, database, owner, feed_seq);
        -- Who sees each zone through their shared database, as of the last change of its shares:
        -- the set a lost viewer is found missing from.
        CREATE TABLE zone_viewers (
            zone_id INTEGER NOT NULL,
            viewer TEXT NOT NULL,
            PRIMARY KEY (zone_id, viewer)
        ) WITHOUT ROWID;
        CREATE INDEX zone_viewers_by_viewer ON zone_viewers(viewer, zone_id);
        -- One clock for every database feed: each write transaction that changes a zone ticks it once.
        CREATE TABLE feed_clock (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            seq INTEGER NOT NULL,
            purged_seq INTEGER NOT NULL
        );
        INSERT INTO feed_clock (id, seq, purged_seq) VALUES (1, 0, 0);
        -- Per viewer and database: zones that went away (deleted, or access lost), at which tick.
        CREATE TABLE database_changes (
            viewer TEXT NOT NULL,
            container_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            scope TEXT NOT NULL,
            zone_id INTEGER NOT NULL,
            zone_name TEXT NOT NULL,
            owner TEXT NOT NULL,
            seq INTEGER NOT NULL,
            deleted INTEGER NOT NULL DEFAULT 0,
            reason TEXT,
            changed_at INTEGER NOT NULL,
            PRIMARY KEY (viewer, container_id, environment, scope, zone_id)
        ) WITHOUT ROWID;
        CREATE INDEX database_changes_by_seq ON database_changes(viewer, container_id, environment, scope, seq);
        CREATE INDEX database_changes_by_zone ON database_changes(zone_id, scope, deleted);
        -- Subscriptions (query, zone, database) per user and database; the subscription itself
        -- as JSON, plus the columns the notification matcher selects by.
        CREATE TABLE subscriptions (
            id INTEGER PRIMARY KEY,
            container_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            scope TEXT NOT NULL,
            owner TEXT NOT NULL,
            subscription_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            zone_owner TEXT,
            zone_name TEXT,
            body BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            UNIQUE (container_id, environment, scope, owner, subscription_id)
        );
        CREATE INDEX subscriptions_by_owner ON subscriptions(container_id, environment, owner);
        """),
        // Schemas (issue 6): each container environment's .ckdb text, what it indexes per field,
        // admin tokens, and the full-text index of SEARCHABLE fields.
        SQLiteMigration(version: 4, sql: """
        CREATE TABLE schemas (
            container_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            text TEXT NOT NULL,
            -- Random per write: the key of the parsed-schema cache.
            etag TEXT NOT NULL,
            updated_at INTEGER NOT NULL,
            PRIMARY KEY (container_id, environment)
        ) WITHOUT ROWID;
        -- options: 1 QUERYABLE, 2 SORTABLE, 4 SEARCHABLE. A field without a row is indexed as
        -- before schemas existed (every field in field_index).
        CREATE TABLE schema_fields (
            container_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            record_type TEXT NOT NULL,
            field TEXT NOT NULL,
            options INTEGER NOT NULL,
            -- The expression index that orders this field, when it has one.
            sort_index TEXT,
            PRIMARY KEY (container_id, environment, record_type, field)
        ) WITHOUT ROWID;
        CREATE INDEX schema_fields_by_sort_index ON schema_fields(sort_index) WHERE sort_index IS NOT NULL;
        CREATE TABLE admin_tokens (
            hash BLOB PRIMARY KEY,
            created_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        -- One row per record (rowid = records.id) holding the search tokens of its SEARCHABLE
        -- fields, each prefixed with a tag of its field name (FieldIndexer.searchBody). The
        -- ascii tokenizer keeps those prefixed tokens whole.
        CREATE VIRTUAL TABLE field_search USING fts5(body, tokenize = 'ascii');
        CREATE TRIGGER records_leave_search AFTER DELETE ON records BEGIN
            DELETE FROM field_search WHERE rowid = old.id;
        END;
        """),
        // Universal links (issue 7): apps with their associated domains, and association files.
        SQLiteMigration(version: 5, sql: """
        -- Apps and their associated domains (entitlement entries, newline-separated, in order).
        CREATE TABLE apps (
            container_id TEXT NOT NULL REFERENCES containers(id),
            app_id TEXT NOT NULL,
            domains TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (container_id, app_id)
        ) WITHOUT ROWID;
        -- One apple-app-site-association file per container and domain; version grows on each
        -- replacement so compiled copies in memory can tell they are stale.
        CREATE TABLE association_files (
            container_id TEXT NOT NULL REFERENCES containers(id),
            domain TEXT NOT NULL,
            body BLOB NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('upload', 'fetch')),
            stored_at INTEGER NOT NULL,
            expires_at INTEGER,
            version INTEGER NOT NULL,
            PRIMARY KEY (container_id, domain)
        ) WITHOUT ROWID;
        """),
        // Shared with You (issue 8): conversations, per-viewer link table, highlights state,
        // collaborations, notices and membership prompts.
        SQLiteMigration(version: 6, sql: """
        CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            container_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            is_group INTEGER NOT NULL,
            title TEXT,
            created_by TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE conversation_members (
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            user TEXT NOT NULL,
            joined_at INTEGER NOT NULL,
            PRIMARY KEY (conversation_id, user)
        ) WITHOUT ROWID;
        CREATE INDEX conversation_members_by_user ON conversation_members(user, conversation_id);
        -- One timeline per conversation: messages, membership events and notices. `subject` is
        -- the member added or removed, or the only viewer of a mention notice.
        CREATE TABLE conversation_events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL REFERENCES conversations(id),
            event_id TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL CHECK (kind IN ('message', 'memberAdded', 'memberRemoved', 'notice')),
            actor TEXT NOT NULL,
            subject TEXT,
            collaboration_id TEXT,
            body BLOB NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX conversation_events_by_conversation ON conversation_events(conversation_id, seq);
        CREATE INDEX conversation_events_by_collaboration ON conversation_events(collaboration_id, seq) WHERE collaboration_id IS NOT NULL;
        -- The highlight list is read from here, never from messages: one row per viewer, URL and
        -- conversation with the latest message that shared it (D21), written on message insert
        -- for every member.
        CREATE TABLE shared_links (
            viewer TEXT NOT NULL,
            container_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            url TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            host TEXT NOT NULL,
            sender TEXT NOT NULL,
            event_id TEXT NOT NULL,
            sent_at INTEGER NOT NULL,
            title TEXT,
            PRIMARY KEY (viewer, container_id, environment, url, conversation_id)
        ) WITHOUT ROWID;
        CREATE INDEX shared_links_by_host ON shared_links(viewer, container_id, environment, host);
        CREATE INDEX shared_links_by_conversation ON shared_links(conversation_id, viewer);
        -- Which URLs each conversation has seen (notices, membership sync).
        CREATE TABLE conversation_links (
            conversation_id TEXT NOT NULL,
            url TEXT NOT NULL,
            last_seq INTEGER NOT NULL,
            PRIMARY KEY (conversation_id, url)
        ) WITHOUT ROWID;
        CREATE INDEX conversation_links_by_url ON conversation_links(url, conversation_id);
        CREATE TABLE link_pins (
            viewer TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            url TEXT NOT NULL,
            pinned_at INTEGER NOT NULL,
            PRIMARY KEY (viewer, conversation_id, url)
        ) WITHOUT ROWID;
        CREATE TABLE contacts (
            owner TEXT NOT NULL,
            handle TEXT NOT NULL COLLATE NOCASE,
            user_record_name TEXT,
            PRIMARY KEY (owner, handle)
        ) WITHOUT ROWID;
        -- scope: global (target ''), app (target app ID), conversation (target conversation ID).
        CREATE TABLE highlight_consent (
            viewer TEXT NOT NULL,
            scope TEXT NOT NULL CHECK (scope IN ('global', 'app', 'conversation')),
            target TEXT NOT NULL,
            allowed INTEGER NOT NULL,
            PRIMARY KEY (viewer, scope, target)
        ) WITHOUT ROWID;
        CREATE TABLE hidden_highlights (
            viewer TEXT NOT NULL,
            url TEXT NOT NULL,
            hidden_at INTEGER NOT NULL,
            PRIMARY KEY (viewer, url)
        ) WITHOUT ROWID;
        CREATE TABLE highlight_interactions (
            viewer TEXT NOT NULL,
            url TEXT NOT NULL,
            weight INTEGER NOT NULL,
            at INTEGER NOT NULL
        );
        CREATE INDEX highlight_interactions_by_viewer ON highlight_interactions(viewer, at);
        -- A collaboration identifier is the app's, so it is unique within a container environment.
        CREATE TABLE collaborations (
            id TEXT NOT NULL,
            container_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            url TEXT NOT NULL,
            owner TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('share', 'custom')),
            title TEXT,
            content_type TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            share_guid TEXT,
            PRIMARY KEY (container_id, environment, id)
        );
        CREATE UNIQUE INDEX collaborations_by_url ON collaborations(container_id, environment, url);
        CREATE TABLE notice_clears (
            viewer TEXT NOT NULL,
            container_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            collaboration_id TEXT NOT NULL,
            through_seq INTEGER NOT NULL,
            PRIMARY KEY (viewer, container_id, environment, collaboration_id)
        ) WITHOUT ROWID;
        CREATE TABLE membership_prompts (
            id TEXT PRIMARY KEY,
            container_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            owner TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            person TEXT NOT NULL,
            change TEXT NOT NULL CHECK (change IN ('add', 'remove')),
            collaborations TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('pending', 'accepted', 'declined')),
            created_at INTEGER NOT NULL
        );
        CREATE INDEX membership_prompts_by_owner ON membership_prompts(owner, container_id, environment, state);
        """),
        // Identity proofs (issue 8, D24).
        SQLiteMigration(version: 7, sql: """
        -- Device keys (uncompressed X9.63 P-256, 65 bytes) that identity trees are built from (D24).
        CREATE TABLE device_keys (
            public_key BLOB PRIMARY KEY,
            user_record_name TEXT NOT NULL REFERENCES users(record_name),
            created_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX device_keys_by_user ON device_keys(user_record_name, created_at);
        -- One person's identity for one collaboration: the tree's leaves (65 bytes each, in order)
        -- and its root, who it was issued to, its state in participants updates, and the account a
        -- verified proof bound it to.
        CREATE TABLE collaboration_identities (
            container_id TEXT NOT NULL REFERENCES containers(id),
            environment TEXT NOT NULL,
            collaboration TEXT NOT NULL,
            root_hash BLOB NOT NULL,
            user_record_name TEXT NOT NULL REFERENCES users(record_name),
            issued_by TEXT NOT NULL REFERENCES users(record_name),
            leaf_keys BLOB NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('issued', 'active', 'removed')),
            bound_user TEXT REFERENCES users(record_name),
            created_at INTEGER NOT NULL,
            bound_at INTEGER,
            PRIMARY KEY (container_id, environment, collaboration, root_hash)
        ) WITHOUT ROWID;
        -- Single-use challenges for identity proofs; expired ones are forgotten.
        CREATE TABLE identity_challenges (
            challenge BLOB PRIMARY KEY,
            user_record_name TEXT NOT NULL,
            container_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            collaboration TEXT NOT NULL,
            expires_at INTEGER NOT NULL,
            used_at INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX identity_challenges_by_expiry ON identity_challenges(expires_at);
        """),
        // The highlight list reads a viewer's link rows by host. With the host index holding only
        // the key, SQLite preferred a scan of every row of the viewer (all hosts) by primary key;
        // covering the columns the list reads lets it seek the app's hosts and read nothing else
        // (the primary key's url and conversation_id are in every index of a WITHOUT ROWID table).
        SQLiteMigration(version: 8, sql: """
        DROP INDEX shared_links_by_host;
        CREATE INDEX shared_links_by_host ON shared_links(viewer, container_id, environment, host, sender, event_id, sent_at, title);
        """),
        // Accounts and sign-in (issue 16): verified emails and display names, sign-in methods,
        // per-container consent, emailed links, and sessions (web auth tokens that expire, are
        // listed and revoked), plus API tokens' allowed origins and sign-in callback.
        SQLiteMigration(version: 9, sql: """
        ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE users ADD COLUMN display_name TEXT;
        -- kind: 'password' (secret: the Argon2id encoded hash, subject ''); later passkeys, OIDC.
        CREATE TABLE sign_in_methods (
            user_record_name TEXT NOT NULL REFERENCES users(record_name),
            kind TEXT NOT NULL,
            subject TEXT NOT NULL DEFAULT '',
            secret TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            last_used_at INTEGER,
            PRIMARY KEY (user_record_name, kind, subject)
        ) WITHOUT ROWID;
        CREATE TABLE container_consents (
            user_record_name TEXT NOT NULL REFERENCES users(record_name),
            container_id TEXT NOT NULL REFERENCES containers(id),
            granted_at INTEGER NOT NULL,
            PRIMARY KEY (user_record_name, container_id)
        ) WITHOUT ROWID;
        -- Single-use emailed links, by SHA-256 of their secret. A sign-up link carries the account
        -- to create (email, name, password hash): nothing exists before the address is proven.
        CREATE TABLE account_links (
            hash BLOB PRIMARY KEY,
            purpose TEXT NOT NULL CHECK (purpose IN ('signup', 'reset')),
            email TEXT NOT NULL COLLATE NOCASE,
            user_record_name TEXT REFERENCES users(record_name),
            display_name TEXT,
            pending_secret TEXT,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            used_at INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX account_links_by_email ON account_links(email, purpose, created_at);
        ALTER TABLE tokens ADD COLUMN device TEXT;
        ALTER TABLE tokens ADD COLUMN last_used_at INTEGER;
        ALTER TABLE tokens ADD COLUMN expires_at INTEGER;
        ALTER TABLE tokens ADD COLUMN idle_ms INTEGER;
        ALTER TABLE tokens ADD COLUMN revoked_at INTEGER;
        -- API tokens: allowed origins (newline-separated) and the sign-in callback ('message' or a URL).
        ALTER TABLE tokens ADD COLUMN origins TEXT;
        ALTER TABLE tokens ADD COLUMN callback TEXT;
        CREATE INDEX tokens_by_user ON tokens(user_record_name) WHERE user_record_name IS NOT NULL;
        """),
        // Accounts, part 2 (issue 16): rotated web auth tokens (A13), admin tokens that expire and
        // are revoked (A14), and deleted accounts (A15: the row stays, without email or names, so
        // the record name is never reused and the email can sign up again).
        SQLiteMigration(version: 10, sql: """
        ALTER TABLE tokens ADD COLUMN rotated_at INTEGER;
        ALTER TABLE tokens ADD COLUMN successor BLOB;
        CREATE INDEX tokens_by_successor ON tokens(successor) WHERE successor IS NOT NULL;
        ALTER TABLE admin_tokens ADD COLUMN expires_at INTEGER;
        ALTER TABLE admin_tokens ADD COLUMN revoked_at INTEGER;
        ALTER TABLE users ADD COLUMN deleted_at INTEGER;
        """),
        // OpenID Connect sign-in (issue 16, decisions A20): one account per identity. A sign-in
        // method of kind 'oidc' has subject 'issuer|sub'; this index finds its account and keeps
        // two accounts from claiming the same identity.
        SQLiteMigration(version: 11, sql: """
        CREATE UNIQUE INDEX sign_in_methods_by_identity ON sign_in_methods(kind, subject) WHERE kind = 'oidc';
        """),
        // Passkeys (issue 16): a passkey is a sign_in_methods row of kind 'passkey' whose subject is
        // its credential ID (base64url). A sign-in names only the credential, so it is found by
        // subject; a credential belongs to one account.
        SQLiteMigration(version: 12, sql: """
        CREATE UNIQUE INDEX sign_in_methods_passkeys ON sign_in_methods(subject) WHERE kind = 'passkey';
        """),
        // Server-to-server keys (issue 17, decisions J7): P-256 public keys an operator registered
        // for a container; a request signed with one acts as its user, in the public database.
        SQLiteMigration(version: 13, sql: """
        CREATE TABLE server_keys (
            key_id TEXT PRIMARY KEY,
            container_id TEXT NOT NULL REFERENCES containers(id),
            public_key BLOB NOT NULL,
            user_record_name TEXT NOT NULL REFERENCES users(record_name),
            created_at INTEGER NOT NULL,
            revoked_at INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX server_keys_by_container ON server_keys(container_id, created_at);
        """),
        // Share invitation emails (issue 16 item 5; A30): a person may turn them off.
        SQLiteMigration(version: 14, sql: """
        ALTER TABLE users ADD COLUMN invitation_emails INTEGER NOT NULL DEFAULT 1;
        """),
        // Accounts after QA (issue 16). A deleted account's server-to-server keys are revoked with
        // it (A43): keys of accounts deleted before that are revoked as of their deletion. A
        // declined invitation is remembered, so the share's owner sees the person REMOVED (A44).
        SQLiteMigration(version: 15, sql: """
        UPDATE server_keys SET revoked_at = (SELECT deleted_at FROM users WHERE record_name = server_keys.user_record_name)
        WHERE revoked_at IS NULL AND user_record_name IN (SELECT record_name FROM users WHERE deleted_at IS NOT NULL);
        ALTER TABLE share_participants ADD COLUMN declined_at INTEGER;
        """),
        // Avatars (issue 16 item 1; decisions A48): the checksum of the picture's file in avatars/
        // and its checked image type. The index answers "does anyone still use this file?".
        SQLiteMigration(version: 16, sql: """
        ALTER TABLE users ADD COLUMN avatar_checksum TEXT;
        ALTER TABLE users ADD COLUMN avatar_type TEXT;
        CREATE INDEX users_by_avatar ON users(avatar_checksum) WHERE avatar_checksum IS NOT NULL;
        """),
        // The web console (issue 18, decisions C1–C3): server administrators, and console
        // sessions (the `tandem_console` cookie) stored by token hash with idle and absolute limits.
        SQLiteMigration(version: 17, sql: """
        ALTER TABLE users ADD COLUMN server_admin INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE console_sessions (
            hash BLOB PRIMARY KEY,
            user_record_name TEXT NOT NULL REFERENCES users(record_name),
            created_at INTEGER NOT NULL,
            last_used_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            idle_ms INTEGER NOT NULL,
            revoked_at INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX console_sessions_by_user ON console_sessions(user_record_name);
        """),
        // Allowed sharing options (issue 23 item 3; decisions R15–R17): the operator's policy per
        // container and an app's narrowing per share, as CKAllowedSharingOptions' wire strings.
        SQLiteMigration(version: 18, sql: """
        ALTER TABLE containers ADD COLUMN allowed_permission TEXT NOT NULL DEFAULT 'ANY';
        ALTER TABLE containers ADD COLUMN allowed_access TEXT NOT NULL DEFAULT 'ANY';
        ALTER TABLE shares ADD COLUMN allowed_permission TEXT NOT NULL DEFAULT 'ANY';
        ALTER TABLE shares ADD COLUMN allowed_access TEXT NOT NULL DEFAULT 'ANY';
        """),
        // Activity invitations (issue 23 item 4; decisions R19–R21): a link and a join code per
        // invitation, stored by their SHA-256.
        SQLiteMigration(version: 19, sql: """
        CREATE TABLE activity_invitations (
            token_hash BLOB PRIMARY KEY,
            code_hash BLOB NOT NULL UNIQUE,
            id TEXT NOT NULL UNIQUE,
            container_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            creator TEXT NOT NULL REFERENCES users(record_name),
            activity TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            revoked_at INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX activity_invitations_by_expiry ON activity_invitations(expires_at);
        """),
        // Who sent each URL into each conversation (issue 23 review; decisions W15): a Tandem
        // share's notices, highlight and membership prompts follow its URL into a conversation
        // only where one of the share's people sent it. Filled from the link table's senders.
        SQLiteMigration(version: 20, sql: """
        CREATE TABLE conversation_link_senders (
            conversation_id TEXT NOT NULL,
            url TEXT NOT NULL,
            sender TEXT NOT NULL,
            PRIMARY KEY (conversation_id, url, sender)
        ) WITHOUT ROWID;
        INSERT OR IGNORE INTO conversation_link_senders (conversation_id, url, sender)
            SELECT DISTINCT conversation_id, url, sender FROM shared_links;
        """),
        // Long-poll push tokens and their mailboxes in the store (issue 20; decisions N58): a
        // poll may reach any node.
        SQLiteMigration(version: 21, sql: """
        CREATE TABLE push_tokens (
            token TEXT NOT NULL,
            container_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            user_record_name TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (token, container_id, environment)
        ) WITHOUT ROWID;
        CREATE INDEX push_tokens_by_user ON push_tokens(user_record_name, container_id, environment);
        CREATE TABLE push_mailbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            token TEXT NOT NULL,
            notification TEXT NOT NULL
        );
        CREATE INDEX push_mailbox_by_token ON push_mailbox(token, seq);
        """),
        // The store's generation (review 47; decisions P78): change tokens carry it, and a copy
        // made by `tandem migrate` (target and source alike) starts a new one, so a token one
        // copy issued after they parted is expired on the other rather than read as a position
        // there. `store_generations` lists the current generation and every one it descends from.
        SQLiteMigration(version: 22, sql: """
        ALTER TABLE feed_clock ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
        UPDATE feed_clock SET generation = (random() & 9223372036854775807) | 1;
        CREATE TABLE store_generations (
            generation INTEGER NOT NULL PRIMARY KEY,
            began_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO store_generations (generation, began_at)
            SELECT generation, CAST(strftime('%s', 'now') AS INTEGER) * 1000 FROM feed_clock;
        """),
    ]
}
