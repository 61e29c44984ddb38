// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// The ERC-8004 Reputation Registry as the committer calls it (the Jan 2026
/// interface: a 0-100 score, string tags, an endpoint, an off-chain
/// feedbackURI committed to by feedbackHash).
interface IReputationRegistry {
    event NewFeedback(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        uint8 score,
        string indexed indexedTag1,
        string tag1,
        string tag2,
        string endpoint,
        string feedbackURI,
        bytes32 feedbackHash
    );
    event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex);

    function getIdentityRegistry() external view returns (address);

    function giveFeedback(
        uint256 agentId,
        uint8 score,
        string calldata tag1,
        string calldata tag2,
        string calldata endpoint,
        string calldata feedbackURI,
        bytes32 feedbackHash
    ) external;

    function revokeFeedback(uint256 agentId, uint64 feedbackIndex) external;

    function getLastIndex(uint256 agentId, address clientAddress) external view returns (uint64);

    function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex)
        external
        view
        returns (uint8 score, string memory tag1, string memory tag2, bool isRevoked);

    function getSummary(uint256 agentId, address[] calldata clientAddresses, string calldata tag1, string calldata tag2)
        external
        view
        returns (uint64 count, uint8 averageScore);

    function getClients(uint256 agentId) external view returns (address[] memory);
}
