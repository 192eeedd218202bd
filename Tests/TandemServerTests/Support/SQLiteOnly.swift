import Testing
import TandemTestSupport

extension Trait where Self == ConditionTrait {
    /// Marks a suite or test about SQLite itself (its files, durability settings, disk-full
    /// behaviour, the data directory's database): skipped when the server suites run against
    /// PostgreSQL (`TANDEM_TEST_STORE=postgres`, decisions P38), with `reason` shown as the skip's
    /// comment.
    static func sqliteOnly(_ reason: Comment) -> Self { .disabled(if: TestStore.isPostgres, reason) }
}
